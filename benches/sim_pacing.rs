//! How closely the simulator keeps to its model's clock in real time: one sequence at a time,
//! 100 tokens each, at several time scales, against the default model (a 10 ms step plus
//! 0.12 ms per running sequence). For each scale, over 10 requests: the real time between
//! the first and the last content chunk the simulator stamped, per token, against the
//! nominal step divided by the scale. This is a question about the machine (how late a thread
//! wakes for an absolute deadline), which is why it is a benchmark and not a test: the tests
//! check the arithmetic (`sim::scheduler_thread`) and count steps.
//!
//! `cargo bench --bench sim_pacing` (release build; the machine otherwise idle).

use rightsize::endpoint::{Api, Endpoint, EndpointSpec};
use rightsize::sim::SimConfig;
use std::time::Duration;

const TOKENS: u32 = 100;
const REQUESTS: usize = 10;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("time scale  nominal step ms  measured p50 ms  min ms  max ms  p50 / nominal");
    for scale in [1.0, 5.0, 25.0, 100.0] {
        let sim = rightsize::sim::start(SimConfig::fast(scale))
            .await
            .expect("the simulator starts");
        let spec = EndpointSpec {
            name: "sim".into(),
            base_url: sim.base_url.clone(),
            model: sim.model.clone(),
            api: Api::Completions,
            stream: true,
            exact_output_length: true,
            headers: vec![],
            api_key_env: None,
            sim_timing: true,
            sagemaker: None,
        };
        let ep = Endpoint::new(&spec, 1, Duration::from_secs(60)).expect("an endpoint");
        let mut steps: Vec<f64> = Vec::with_capacity(REQUESTS);
        for _ in 0..REQUESTS {
            let o = ep.send("a b c", TOKENS).await;
            assert_eq!(o.error, None, "{o:?}");
            let (first, last) = (
                o.server_first_sent_ns.unwrap(),
                o.server_last_sent_ns.unwrap(),
            );
            steps.push((last - first) as f64 / 1e6 / f64::from(TOKENS - 1));
        }
        steps.sort_by(f64::total_cmp);
        let nominal = (10.0 + 0.12) / scale;
        let p50 = steps[REQUESTS / 2];
        println!(
            "{scale:>10}  {nominal:>15.4}  {p50:>15.4}  {:>6.4}  {:>6.4}  {:>13.3}",
            steps[0],
            steps[REQUESTS - 1],
            p50 / nominal
        );
        sim.shutdown();
    }
}
