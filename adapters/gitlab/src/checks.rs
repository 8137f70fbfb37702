//! A failed pipeline as a check's output, as much of it as GitLab gives: the pipeline (its
//! name, ref and status), its failed jobs (name, stage, why) and the end of each one's log.
//! GitLab has no annotations on lines; the logs are where the failure is said.

use std::fmt::Write as _;

use forge_domain::ForgeError;
use forge_domain::forges::{CheckRunOutput, RepoRef};
use gitlab::api::projects::jobs::{JobScope, JobTrace};
use gitlab::api::projects::pipelines::{Pipeline, PipelineJobs};
use serde_json::Value;

use crate::forge::{GitlabForge, built, project};
use crate::{decode, trace};

/// The failed jobs whose logs a follow-up carries (the first ones; the rest are named).
const MAX_LOGS: usize = 3;

pub(crate) async fn pipeline_output(
    forge: &GitlabForge,
    repo: &RepoRef,
    pipeline_id: u64,
) -> Result<CheckRunOutput, ForgeError> {
    let endpoint = Pipeline::builder()
        .project(project(repo))
        .pipeline(pipeline_id)
        .build()
        .map_err(built)?;
    let pipeline = forge
        .query(&format!("reading pipeline {pipeline_id}"), endpoint)
        .await?;
    let endpoint = PipelineJobs::builder()
        .project(project(repo))
        .pipeline(pipeline_id)
        .scope(JobScope::Failed)
        .build()
        .map_err(built)?;
    let failed = forge
        .list(
            &format!("reading the failed jobs of pipeline {pipeline_id}"),
            endpoint,
        )
        .await?;
    let mut logs = Vec::new();
    for job in failed.iter().take(MAX_LOGS) {
        let id = decode::u64_field(job, "a job", "id")?;
        let endpoint = JobTrace::builder()
            .project(project(repo))
            .job(id)
            .build()
            .map_err(built)?;
        let raw = forge
            .raw(&format!("reading the log of job {id}"), endpoint)
            .await?;
        logs.push(trace::clean_tail(&raw));
    }
    Ok(output(pipeline_id, &pipeline, &failed, &logs))
}

fn text<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The output: title the pipeline's verdict, summary its failed jobs, text their logs'
/// ends (`logs[i]` is `failed[i]`'s).
fn output(id: u64, pipeline: &Value, failed: &[Value], logs: &[String]) -> CheckRunOutput {
    let name = match text(pipeline, "name") {
        "" => format!("pipeline #{id}"),
        named => named.to_owned(),
    };
    let title = format!(
        "pipeline #{id} {} on {}",
        match text(pipeline, "status") {
            "" => "finished",
            status => status,
        },
        text(pipeline, "ref")
    );
    let mut summary = String::new();
    for job in failed {
        let _ = write!(
            summary,
            "- {} (stage {})",
            text(job, "name"),
            text(job, "stage")
        );
        match text(job, "failure_reason") {
            "" => summary.push('\n'),
            why => {
                let _ = writeln!(summary, ": {why}");
            }
        }
    }
    let mut body = String::new();
    for (job, log) in failed.iter().zip(logs) {
        let _ = writeln!(
            body,
            "### {} (stage {})\n\n```\n{log}\n```\n",
            text(job, "name"),
            text(job, "stage")
        );
    }
    if failed.len() > logs.len() {
        let _ = writeln!(
            body,
            "{} more failed jobs; their logs are on the pipeline's page.",
            failed.len() - logs.len()
        );
    }
    CheckRunOutput {
        id,
        name,
        title: Some(title),
        summary: (!summary.is_empty()).then(|| format!("Failed jobs:\n{summary}")),
        text: (!body.is_empty()).then(|| body.trim_end().to_owned()),
        annotations: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_failed_pipeline_said_as_a_check() {
        let pipeline = json!({"id": 9, "status": "failed", "ref": "forge/t-1", "name": null});
        let failed = vec![
            json!({"id": 1, "name": "test", "stage": "test", "failure_reason": "script_failure"}),
            json!({"id": 2, "name": "lint", "stage": "check"}),
        ];
        let got = output(9, &pipeline, &failed, &["FAIL: x".to_owned()]);
        assert_eq!(
            got,
            CheckRunOutput {
                id: 9,
                name: "pipeline #9".into(),
                title: Some("pipeline #9 failed on forge/t-1".into()),
                summary: Some(
                    "Failed jobs:\n- test (stage test): script_failure\n- lint (stage check)\n"
                        .into()
                ),
                text: Some(
                    "### test (stage test)\n\n```\nFAIL: x\n```\n\n1 more failed jobs; their logs are on the pipeline's page."
                        .into()
                ),
                annotations: vec![],
            }
        );
        let named = json!({"name": "nightly", "status": "", "ref": "main"});
        let got = output(3, &named, &[], &[]);
        assert_eq!(
            (got.name.as_str(), got.title, got.summary, got.text),
            (
                "nightly",
                Some("pipeline #3 finished on main".into()),
                None,
                None
            )
        );
    }
}
