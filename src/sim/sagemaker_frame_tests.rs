//! Table tests of the event-stream framing between the simulator's SageMaker API and the
//! client: frames written by [`super::write_parts`] and [`super::model_stream_error`], read by
//! `aws-smithy-eventstream`'s `MessageFrameDecoder` (the decoder the SDK's response stream
//! runs over the bytes it reads). Frames split at every byte, several in one read, a bad
//! prelude CRC, a bad message CRC, an exception frame and a truncated frame.

use super::*;
use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use bytes::BytesMut;

const PAYLOAD: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\" hello\"}}]}\n\n\
data: {\"choices\":[{\"delta\":{\"content\":\" world\"}}]}\n\ndata: [DONE]\n\n";

fn sim(max_part_bytes: usize, frame_fault: Option<FrameFault>) -> SageMakerSim {
    SageMakerSim {
        credentials: None,
        refuse: None,
        frame_fault,
        max_part_bytes,
    }
}

/// The wire bytes of `PAYLOAD` cut into parts of at most `max` bytes.
fn wire(max: usize, fault: Option<FrameFault>) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut frames = 0;
    let cut = write_parts(
        PAYLOAD,
        &sim(max, fault),
        &mut SplitMix64::new(7),
        &mut frames,
        &mut out,
    );
    (out, cut)
}

/// What decoding `reads` in order gives: the messages, then the error that stopped it (if
/// any), and the bytes left over that never made a frame.
fn decode(reads: &[&[u8]]) -> (Vec<Message>, Option<String>, usize) {
    let mut decoder = MessageFrameDecoder::new();
    let mut buf = BytesMut::new();
    let mut messages = Vec::new();
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            match decoder.decode_frame(&mut buf) {
                Ok(DecodedFrame::Complete(m)) => messages.push(m),
                Ok(DecodedFrame::Incomplete) => break,
                Err(e) => return (messages, Some(e.to_string()), buf.len()),
            }
        }
    }
    (messages, None, buf.len())
}

fn header<'a>(m: &'a Message, name: &str) -> Option<&'a str> {
    m.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| h.value().as_string().ok())
        .map(|s| s.as_str())
}

fn joined(messages: &[Message]) -> Vec<u8> {
    messages.iter().flat_map(|m| m.payload().to_vec()).collect()
}

#[test]
fn frames_split_at_every_byte_read_back_whole() {
    let (bytes, cut) = wire(16, None);
    assert!(!cut);
    let (all, err, left) = decode(&[&bytes]);
    assert_eq!((err, left), (None, 0));
    assert!(all.len() > 4, "{} frames", all.len());
    for split in 0..=bytes.len() {
        let (msgs, err, left) = decode(&[&bytes[..split], &bytes[split..]]);
        assert_eq!((err, left), (None, 0), "split at {split}");
        assert_eq!(joined(&msgs), PAYLOAD, "split at {split}");
        assert!(msgs
            .iter()
            .all(|m| header(m, ":event-type") == Some("PayloadPart")));
    }
    // and one byte per read
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    let (msgs, err, _) = decode(&bytewise);
    assert_eq!(err, None);
    assert_eq!(joined(&msgs), PAYLOAD);
}

#[test]
fn several_frames_in_one_read_come_out_one_by_one() {
    let (bytes, _) = wire(8, None);
    let (msgs, err, left) = decode(&[&bytes]);
    assert_eq!((err, left), (None, 0));
    // parts of 1 to 8 bytes: at least PAYLOAD / 8 frames, each in order
    assert!(msgs.len() >= PAYLOAD.len() / 8, "{} frames", msgs.len());
    assert!(msgs.iter().all(|m| (1..=8).contains(&m.payload().len())));
    assert_eq!(joined(&msgs), PAYLOAD);
}

#[test]
fn a_bad_prelude_crc_stops_at_the_second_frame() {
    let (bytes, _) = wire(16, Some(FrameFault::BadPreludeCrc));
    let (msgs, err, _) = decode(&[&bytes]);
    assert_eq!(msgs.len(), 1, "the first frame is whole");
    let err = err.expect("a prelude CRC error");
    assert!(err.to_lowercase().contains("prelude"), "{err}");
}

#[test]
fn a_bad_message_crc_stops_at_the_second_frame() {
    let (bytes, _) = wire(16, Some(FrameFault::BadMessageCrc));
    let (msgs, err, _) = decode(&[&bytes]);
    assert_eq!(msgs.len(), 1);
    let err = err.expect("a message CRC error");
    assert!(err.contains("message checksum"), "{err}");
}

#[test]
fn a_truncated_frame_never_completes() {
    let (bytes, cut) = wire(16, Some(FrameFault::Truncated));
    assert!(cut, "the writer says nothing may follow");
    let (msgs, err, left) = decode(&[&bytes]);
    assert_eq!((msgs.len(), err), (1, None));
    // the half frame waits for bytes that never come: the stream ends short of a frame
    assert!(left > 0, "{left} bytes left");
}

#[test]
fn an_exception_frame_names_its_type_and_carries_the_message() {
    let (mut bytes, _) = wire(64, None);
    model_stream_error("the container failed", &mut bytes);
    let (msgs, err, left) = decode(&[&bytes]);
    assert_eq!((err, left), (None, 0));
    let last = msgs.last().unwrap();
    assert_eq!(header(last, ":message-type"), Some("exception"));
    assert_eq!(header(last, ":exception-type"), Some("ModelStreamError"));
    let body: serde_json::Value = serde_json::from_slice(last.payload()).unwrap();
    assert_eq!(body["Message"], "the container failed");
    assert_eq!(joined(&msgs[..msgs.len() - 1]), PAYLOAD);
}
