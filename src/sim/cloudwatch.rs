//! CloudWatch's `GetMetricData` for the simulated SageMaker endpoint, in the AWS Query protocol
//! (a form-encoded `POST /`, an XML answer), so `rightsize` reads its per-minute metrics
//! through the AWS SDK's CloudWatch client as it would a real endpoint's. Written by hand: no
//! crate serves the Query protocol, and the answer is one fixed XML shape. Signatures are not
//! checked here (the runtime API checks them).
//!
//! Per minute (`sim::minutes`): `Invocations` (requests completed), `ModelLatency` (their mean
//! time from arrival to last token, µs), `GPUUtilization` (the share of the minute the
//! scheduler was stepping, %) and `GPUMemoryUtilization` (the 90 % a serving engine reserves).
//! The simulator models no CPU: `CPUUtilization` has no values. Any endpoint and variant name
//! is answered.

use std::collections::BTreeMap;

use super::minutes::{Minute, MinuteHistory};

/// What one query asks for.
#[derive(Debug, Default, PartialEq)]
struct Query {
    id: String,
    metric: String,
}

/// The value of `metric` in a minute, if the simulator has one.
fn value(metric: &str, m: &Minute) -> Option<f64> {
    match metric {
        "Invocations" => Some(m.invocations as f64),
        "ModelLatency" => (m.invocations > 0).then(|| m.latency_us / m.invocations as f64),
        "GPUUtilization" => Some((m.busy_ns as f64 / 60e9 * 100.0).min(100.0)),
        "GPUMemoryUtilization" => Some(90.0),
        _ => None,
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Seconds since the epoch of an ISO 8601 time as the SDK writes it.
fn epoch_s(s: &str) -> Option<u64> {
    let t = aws_smithy_types::DateTime::from_str(s, aws_smithy_types::date_time::Format::DateTime)
        .ok()?;
    u64::try_from(t.secs()).ok()
}

/// The answer to a form-encoded Query request: (HTTP status, XML).
pub fn answer(body: &[u8], history: &MinuteHistory) -> (u16, String) {
    let form: BTreeMap<String, String> = form_urlencoded::parse(body).into_owned().collect();
    let error = |status: u16, code: &str, message: &str| {
        (
            status,
            format!(
                "<ErrorResponse xmlns=\"http://monitoring.amazonaws.com/doc/2010-08-01/\"><Error>\
                 <Type>Sender</Type><Code>{code}</Code><Message>{}</Message></Error>\
                 <RequestId>rightsize-sim</RequestId></ErrorResponse>",
                xml_escape(message)
            ),
        )
    };
    match form.get("Action").map(String::as_str) {
        Some("GetMetricData") => {}
        other => {
            return error(
                400,
                "InvalidAction",
                &format!(
                    "the simulator's CloudWatch answers GetMetricData, not {}",
                    other.unwrap_or("(no Action)")
                ),
            )
        }
    }
    let (Some(from), Some(to)) = (
        form.get("StartTime").and_then(|s| epoch_s(s)),
        form.get("EndTime").and_then(|s| epoch_s(s)),
    ) else {
        return error(
            400,
            "MissingParameter",
            "StartTime and EndTime are required",
        );
    };
    let mut queries: BTreeMap<u32, Query> = BTreeMap::new();
    for (k, v) in &form {
        let Some(rest) = k.strip_prefix("MetricDataQueries.member.") else {
            continue;
        };
        let Some((n, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let q = queries.entry(n).or_default();
        match field {
            "Id" => q.id.clone_from(v),
            "MetricStat.Metric.MetricName" => q.metric.clone_from(v),
            _ => {}
        }
    }
    let minutes = history.between(from, to);
    let mut results = String::new();
    for q in queries.values() {
        let (mut stamps, mut values) = (String::new(), String::new());
        // newest first, as CloudWatch orders them by default
        for (start, m) in minutes.iter().rev() {
            if let Some(v) = value(&q.metric, m) {
                let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(*start);
                stamps += &format!("<member>{}</member>", crate::wallclock::rfc3339_utc(t));
                values += &format!("<member>{v}</member>");
            }
        }
        results += &format!(
            "<member><Id>{}</Id><Label>{}</Label><Timestamps>{stamps}</Timestamps>\
             <Values>{values}</Values><StatusCode>Complete</StatusCode></member>",
            xml_escape(&q.id),
            xml_escape(&q.metric)
        );
    }
    (
        200,
        format!(
            "<GetMetricDataResponse xmlns=\"http://monitoring.amazonaws.com/doc/2010-08-01/\">\
             <GetMetricDataResult><MetricDataResults>{results}</MetricDataResults>\
             <Messages/></GetMetricDataResult><ResponseMetadata><RequestId>rightsize-sim\
             </RequestId></ResponseMetadata></GetMetricDataResponse>"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn get_metric_data_answers_per_minute() {
        let h = MinuteHistory::default();
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        h.finished(at(60), 3_000_000);
        h.finished(at(70), 1_000_000);
        h.stepped(at(70), 6_000_000_000);
        let body = "Action=GetMetricData&Version=2010-08-01\
            &MetricDataQueries.member.1.Id=latency\
            &MetricDataQueries.member.1.MetricStat.Metric.MetricName=ModelLatency\
            &MetricDataQueries.member.2.Id=gpu\
            &MetricDataQueries.member.2.MetricStat.Metric.MetricName=GPUUtilization\
            &MetricDataQueries.member.3.Id=cpu\
            &MetricDataQueries.member.3.MetricStat.Metric.MetricName=CPUUtilization\
            &StartTime=1970-01-01T00%3A01%3A00Z&EndTime=1970-01-01T00%3A02%3A00Z";
        let (status, xml) = answer(body.as_bytes(), &h);
        assert_eq!(status, 200);
        assert!(
            xml.contains(
                "<member><Id>latency</Id><Label>ModelLatency</Label><Timestamps><member>\
                 1970-01-01T00:01:00.000Z</member></Timestamps><Values><member>2000</member>\
                 </Values>"
            ),
            "{xml}"
        );
        // 6 s of steps in the minute: 10 %
        assert!(
            xml.contains("<Values><member>10</member></Values>"),
            "{xml}"
        );
        assert!(
            xml.contains("<Id>cpu</Id><Label>CPUUtilization</Label><Timestamps></Timestamps>"),
            "{xml}"
        );
        let (status, xml) = answer(b"Action=ListMetrics", &h);
        assert_eq!(status, 400);
        assert!(xml.contains("<Code>InvalidAction</Code>"), "{xml}");
    }
}
