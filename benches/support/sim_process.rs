//! `rightsize sim` as a separate process for the benchmarks: started on an OS-chosen port,
//! killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct SimProcess {
    child: Child,
    pub base_url: String,
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rightsize sim --port 0 ARGS`; `cpu` pins it to that CPU (`taskset`).
pub fn start_sim(args: &[&str], cpu: Option<u32>) -> SimProcess {
    let exe = env!("CARGO_BIN_EXE_rightsize");
    let mut cmd = match cpu {
        Some(c) => {
            let mut c2 = Command::new("taskset");
            c2.args(["-c", &c.to_string(), exe]);
            c2
        }
        None => Command::new(exe),
    };
    let mut child = cmd
        .args(["sim", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start rightsize sim");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("sim stdout"))
        .read_line(&mut line)
        .expect("sim prints its URL");
    SimProcess {
        child,
        base_url: line.trim().to_string(),
    }
}
