//! The HTTP/1.1 transport of generation requests, for `http://` and `https://` alike:
//! hyper's connection-level client over sockets of ours (why ours: [`connection`]), rustls
//! under the same connection for TLS, hyper-util's connector and proxy matcher. hyper owns the
//! protocol; what is written here is the timing and the hand-overs a measuring client needs.
//!
//! One streamed chat request, from the worker to its recorded TTFT, in the order the files
//! act (eight files):
//!
//! 1. `engine/workers.rs`: a worker's slot frees; it takes the next prompt and calls
//!    `Endpoint::send_counting`.
//! 2. `endpoint/client.rs`: the endpoint builds the body in its adapter's format
//!    (`openai::request_body`), stamps `start_ns` on the monotonic clock, sets the deadline
//!    and hands the body to [`exchange`]; at the end it stamps `end_ns` and counts tokens the
//!    server did not.
//! 3. [`exchange`]: `HttpClient::exchange` takes a connection from the pool, queues the
//!    request and writes it at once in the worker's task, then moves the connection to the
//!    first-token lane, a thread of its own, which reads the head and the first events
//!    (`until_first_token`); the rest of the stream comes back to the worker.
//! 4. [`pool`]: an idle keep-alive connection, or a new one (DNS, connect, TLS, proxy).
//! 5. [`connection`]: hyper's client polled in the reading task; the socket stamps
//!    `crate::clock::now_ns` the moment a `read()` returns bytes, and each body frame carries
//!    that time (`Conn::next_data`).
//! 6. [`body`]: the frames decoded (gzip or deflate when a server compresses anyway) and sorted
//!    into an error, a stream or a whole answer.
//! 7. `endpoint/stream.rs`: the stream reader feeds each read's bytes to the SSE framing
//!    (`endpoint/sse.rs`) and each event to the adapter's chunk parser (`openai::parse_chunk`);
//!    the first event with content sets `first_token_ns` to its read's time.
//! 8. `record/request.rs`: `RequestRecord::from_outcome` rebases the times on the level's
//!    start; `ttft_ns()` is `first_token_ns - start_ns`. The level's accumulator
//!    (`metrics::accumulator`) folds it into the TTFT histogram.
//!
//! Beside the path: [`request_head`] builds the target and headers once per endpoint,
//! [`failure`] records failures before any response, classified and described as the
//! control-plane client's are (`endpoint/failure.rs`), and tells a stale keep-alive
//! connection, safe to send again, from the rest, and [`direct`] is the open-loop
//! dispatcher's writer, which writes a request on its own thread at its intended time and
//! hands the connection to the same path at step 3.

pub(crate) mod body;
pub(crate) mod connection;
pub(crate) mod direct;
pub(crate) mod exchange;
pub(crate) mod failure;
pub(crate) mod pool;
pub(crate) mod request_head;
