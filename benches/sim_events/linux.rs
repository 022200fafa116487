//! The benchmark itself (Linux: it pins threads and reads per-thread CPU time).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rightsize::sim::{self, SimConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn pin_to(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it, and
    // sched_setaffinity(0, ...) only changes the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// CPU time (user + system) in seconds of the process or of the calling thread.
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage fills the zeroed struct we pass; RUSAGE_SELF and RUSAGE_THREAD are
    // valid on Linux.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One keep-alive connection sending streaming requests back to back; counts finished
/// requests until `stop`.
async fn worker(
    addr: std::net::SocketAddr,
    id: u64,
    max_tokens: u64,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
) -> std::io::Result<()> {
    let mut s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    while !stop.load(Relaxed) {
        n += 1;
        let body = format!(
            "{{\"model\":\"sim-moe-30b-a3b\",\"messages\":[{{\"role\":\"user\",\"content\":\
             \"bench {id} {n} the data flow of tokens\"}}],\"max_tokens\":{max_tokens},\
             \"ignore_eos\":true,\"stream\":true}}"
        );
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await?;
        // the chunked body ends with the zero-length chunk after `data: [DONE]`
        let mut tail = [0u8; 7];
        loop {
            let k = s.read(&mut buf).await?;
            if k == 0 {
                return Err(std::io::Error::other("server closed the connection"));
            }
            if k >= 7 {
                tail.copy_from_slice(&buf[k - 7..k]);
            } else {
                tail.rotate_left(k);
                tail[7 - k..].copy_from_slice(&buf[..k]);
            }
            if &tail == b"\r\n0\r\n\r\n" {
                break;
            }
        }
        done.fetch_add(1, Relaxed);
    }
    Ok(())
}

pub fn main() {
    let seconds = arg("--seconds", 5);
    let concurrency = arg("--concurrency", 256);
    let max_tokens = arg("--max-tokens", 256);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = cores >= 2;

    let cfg = SimConfig {
        decode_base_ms: 0.0,
        decode_per_seq_ms: 0.0,
        prefill_per_token_ms: 0.0,
        max_num_seqs: concurrency.max(1) as u32,
        kv_cache_tokens: 100_000_000,
        ..SimConfig::fast(1.0)
    };
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_sim_tx, stop_sim_rx) = tokio::sync::oneshot::channel::<()>();
    let sim_thread = std::thread::spawn(move || {
        if pinned {
            pin_to(0); // the scheduler thread, spawned from here, inherits it
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("sim runtime");
        rt.block_on(async move {
            let server = sim::start(cfg).await.expect("sim starts");
            addr_tx.send(server.addr).expect("main waits");
            let _ = stop_sim_rx.await;
            server.shutdown();
        });
    });
    let addr = addr_rx.recv().expect("sim address");

    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // the client thread publishes its own CPU time (f64 bits) every 20 ms
    let client_cpu = Arc::new(AtomicU64::new(0));
    let client = {
        let (done, stop, client_cpu) = (
            Arc::clone(&done),
            Arc::clone(&stop),
            Arc::clone(&client_cpu),
        );
        std::thread::spawn(move || {
            if pinned {
                pin_to(1);
            }
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("client runtime");
            rt.block_on(async move {
                let probe_stop = Arc::clone(&stop);
                tokio::spawn(async move {
                    while !probe_stop.load(Relaxed) {
                        client_cpu.store(cpu_seconds(libc::RUSAGE_THREAD).to_bits(), Relaxed);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                });
                let tasks: Vec<_> = (0..concurrency)
                    .map(|id| {
                        let w = worker(addr, id, max_tokens, Arc::clone(&stop), Arc::clone(&done));
                        tokio::spawn(w)
                    })
                    .collect();
                for t in tasks {
                    if let Ok(Err(e)) = t.await {
                        eprintln!("client worker failed: {e}");
                    }
                }
            });
        })
    };
    let client_cpu_now = || f64::from_bits(client_cpu.load(Relaxed));

    std::thread::sleep(Duration::from_secs(1)); // warm-up
    let (r0, cpu0, c0, t0) = (
        done.load(Relaxed),
        cpu_seconds(libc::RUSAGE_SELF),
        client_cpu_now(),
        Instant::now(),
    );
    std::thread::sleep(Duration::from_secs(seconds));
    let (r1, cpu1, c1, wall) = (
        done.load(Relaxed),
        cpu_seconds(libc::RUSAGE_SELF),
        client_cpu_now(),
        t0.elapsed(),
    );
    stop.store(true, Relaxed);
    client.join().expect("client thread");
    let _ = stop_sim_tx.send(());
    let _ = sim_thread.join();

    let requests = (r1 - r0) as f64;
    let events = requests * max_tokens as f64;
    let wall = wall.as_secs_f64();
    let process_cpu = cpu1 - cpu0;
    println!("sim_events: {cores} cores, sim pinned to CPU 0 and client to CPU 1: {pinned}");
    println!("  concurrency {concurrency}, {max_tokens} tokens per request, {seconds} s measured");
    println!("  token events/s:        {:>12.0}", events / wall);
    println!("  requests/s:            {:>12.1}", requests / wall);
    println!(
        "  process CPU per event: {:>12.2} us (sim + client, {:.2} CPU-s over {:.2} s)",
        process_cpu / events * 1e6,
        process_cpu,
        wall
    );
    let sim_cpu = process_cpu - (c1 - c0);
    println!(
        "  sim CPU per event:     {:>12.2} us (process minus client thread: {:.2} CPU-s, {:.0} % of a core)",
        sim_cpu / events * 1e6,
        sim_cpu,
        sim_cpu / wall * 100.0
    );
}
