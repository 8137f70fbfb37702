//! What the fake GitLab holds — projects, users and their access levels, merge requests,
//! their discussions and notes, approvals, pipelines with jobs and logs — every request it
//! received, and the contract violations among them; and the JSON GitLab answers for each,
//! with the fields its API documentation lists.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Value, json};

pub use crate::github::{Fault, Recorded};

/// When everything on the fake happened.
pub const TIME: &str = "2026-11-27T12:00:00.000Z";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeProject {
    pub id: u64,
    /// `group/sub/project`.
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeUser {
    pub id: u64,
    pub username: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeMergeRequest {
    pub id: u64,
    pub iid: u64,
    pub project_id: u64,
    pub title: String,
    pub description: String,
    pub source_branch: String,
    pub target_branch: String,
    /// `opened`, `closed`, `merged` or `locked`.
    pub state: String,
    pub author: String,
}

impl FakeMergeRequest {
    /// GitLab's rule: a draft while the title starts with `Draft:`, `[Draft]` or `(Draft)`.
    pub fn draft(&self) -> bool {
        is_draft_title(&self.title)
    }
}

/// GitLab's draft title rule (case-insensitive prefixes).
pub fn is_draft_title(title: &str) -> bool {
    let t = title.trim_start().to_ascii_lowercase();
    ["draft:", "[draft]", "(draft)"]
        .iter()
        .any(|p| t.starts_with(p))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeNote {
    pub id: u64,
    pub author: String,
    pub body: String,
    /// GitLab's own notes ("marked this merge request as draft").
    pub system: bool,
    /// `(new_path, new_line)` of a note on the diff.
    pub position: Option<(String, u32)>,
}

/// A discussion: one note on its own (`individual_note`) or a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeDiscussion {
    /// 40 hex digits.
    pub id: String,
    pub project_id: u64,
    pub iid: u64,
    pub individual_note: bool,
    pub notes: Vec<FakeNote>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeJob {
    pub id: u64,
    pub name: String,
    pub stage: String,
    /// `failed`, `success`, …
    pub status: String,
    pub failure_reason: Option<String>,
    pub trace: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakePipeline {
    pub id: u64,
    pub project_id: u64,
    pub name: Option<String>,
    pub git_ref: String,
    pub sha: String,
    pub status: String,
    pub jobs: Vec<FakeJob>,
}

#[derive(Debug, Default)]
pub struct GitlabState {
    /// The host of web URLs (`https://HOST/group/project/-/merge_requests/1`).
    pub host: String,
    /// The token's owner: what forge writes is written by them.
    pub bot: String,
    pub projects: Vec<FakeProject>,
    pub users: Vec<FakeUser>,
    /// `(project id, user id)` → access level (10 Guest … 50 Owner).
    pub members: BTreeMap<(u64, u64), u32>,
    pub merge_requests: Vec<FakeMergeRequest>,
    pub discussions: Vec<FakeDiscussion>,
    /// `(project id, iid)` → the usernames that approved, in order.
    pub approvals: BTreeMap<(u64, u64), Vec<String>>,
    pub pipelines: Vec<FakePipeline>,
    pub requests: Vec<Recorded>,
    /// How each request authenticated: `private-token`, `bearer` or `none`.
    pub auth: Vec<&'static str>,
    pub violations: Vec<String>,
    pub faults: VecDeque<Fault>,
    next_id: u64,
}

impl GitlabState {
    pub fn new(host: &str, bot: &str) -> Self {
        let mut state = Self {
            host: host.to_owned(),
            bot: bot.to_owned(),
            ..Self::default()
        };
        state.add_user(bot);
        state
    }

    /// A fresh id (projects, users, merge requests, notes, pipelines and jobs share them).
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Adds project `path`; its id.
    pub fn add_project(&mut self, path: &str) -> u64 {
        let id = self.id();
        self.projects.push(FakeProject {
            id,
            path: path.to_owned(),
        });
        id
    }

    /// Adds user `username` (or finds them); their id.
    pub fn add_user(&mut self, username: &str) -> u64 {
        if let Some(u) = self.users.iter().find(|u| u.username == username) {
            return u.id;
        }
        let id = self.id();
        self.users.push(FakeUser {
            id,
            username: username.to_owned(),
        });
        id
    }

    pub fn project(&self, path_or_id: &str) -> Option<&FakeProject> {
        self.projects
            .iter()
            .find(|p| p.path == path_or_id || p.id.to_string() == path_or_id)
    }

    fn project_id(&self, path: &str) -> u64 {
        self.project(path).map_or(0, |p| p.id)
    }

    /// Makes `username` a member of project `path` at `level`.
    pub fn add_member(&mut self, path: &str, username: &str, level: u32) {
        let user = self.add_user(username);
        let project = self.project_id(path);
        self.members.insert((project, user), level);
    }

    /// The merge request `iid` of project `path`.
    pub fn merge_request(&self, path: &str, iid: u64) -> Option<&FakeMergeRequest> {
        let project = self.project_id(path);
        self.merge_requests
            .iter()
            .find(|m| m.project_id == project && m.iid == iid)
    }

    /// A discussion with one note by `author` on merge request `iid` of `path`: on the diff
    /// at `position` (a thread), or on its own; the discussion's id and the note's.
    pub fn add_discussion(
        &mut self,
        path: &str,
        iid: u64,
        author: &str,
        body: &str,
        position: Option<(&str, u32)>,
    ) -> (String, u64) {
        self.add_user(author);
        let project_id = self.project_id(path);
        let note = self.id();
        let id = format!("{:040x}", 0xd15c_0000_u64 + note);
        self.discussions.push(FakeDiscussion {
            id: id.clone(),
            project_id,
            iid,
            individual_note: position.is_none(),
            notes: vec![FakeNote {
                id: note,
                author: author.to_owned(),
                body: body.to_owned(),
                system: false,
                position: position.map(|(p, l)| (p.to_owned(), l)),
            }],
        });
        (id, note)
    }

    /// `username` approves merge request `iid` of `path`.
    pub fn approve(&mut self, path: &str, iid: u64, username: &str) {
        self.add_user(username);
        let project = self.project_id(path);
        self.approvals
            .entry((project, iid))
            .or_default()
            .push(username.to_owned());
    }

    /// A finished pipeline on `git_ref` of `path` with `jobs` (name, stage, status, log);
    /// its id.
    pub fn add_pipeline(
        &mut self,
        path: &str,
        git_ref: &str,
        status: &str,
        jobs: &[(&str, &str, &str, &str)],
    ) -> u64 {
        let project_id = self.project_id(path);
        let id = self.id();
        let jobs = jobs
            .iter()
            .map(|(name, stage, status, trace)| FakeJob {
                id: self.id(),
                name: (*name).to_owned(),
                stage: (*stage).to_owned(),
                status: (*status).to_owned(),
                failure_reason: (*status == "failed").then(|| "script_failure".to_owned()),
                trace: (*trace).to_owned(),
            })
            .collect();
        self.pipelines.push(FakePipeline {
            id,
            project_id,
            name: None,
            git_ref: git_ref.to_owned(),
            sha: format!("{:040x}", 0x5a_0000 + id),
            status: status.to_owned(),
            jobs,
        });
        id
    }

    /// The notes of merge request `iid` of `path`, oldest first.
    pub fn notes(&self, path: &str, iid: u64) -> Vec<&FakeNote> {
        let project = self.project_id(path);
        let mut notes: Vec<&FakeNote> = self
            .discussions
            .iter()
            .filter(|d| d.project_id == project && d.iid == iid)
            .flat_map(|d| &d.notes)
            .collect();
        notes.sort_by_key(|n| n.id);
        notes
    }

    pub fn user_json(&self, username: &str) -> Value {
        let id = self
            .users
            .iter()
            .find(|u| u.username == username)
            .map_or(0, |u| u.id);
        json!({
            "id": id,
            "username": username,
            "name": username,
            "state": "active",
            "locked": false,
            "avatar_url": null,
            "web_url": format!("https://{}/{username}", self.host),
        })
    }

    fn project_path(&self, id: u64) -> &str {
        self.projects
            .iter()
            .find(|p| p.id == id)
            .map_or("", |p| p.path.as_str())
    }

    pub fn merge_request_json(&self, m: &FakeMergeRequest) -> Value {
        let path = self.project_path(m.project_id);
        let user_notes = self.notes(path, m.iid).iter().filter(|n| !n.system).count();
        let reference = format!("!{}", m.iid);
        let draft = m.draft();
        // Two halves: one `json!` of every field is past the macro's recursion limit.
        let mut mr = json!({
            "id": m.id,
            "iid": m.iid,
            "project_id": m.project_id,
            "title": m.title,
            "description": m.description,
            "state": m.state,
            "created_at": TIME,
            "updated_at": TIME,
            "merged_by": null,
            "merge_user": null,
            "merged_at": null,
            "closed_by": null,
            "closed_at": null,
            "target_branch": m.target_branch,
            "source_branch": m.source_branch,
            "user_notes_count": user_notes,
            "upvotes": 0,
            "downvotes": 0,
            "author": self.user_json(&m.author),
            "assignees": [],
            "assignee": null,
            "reviewers": [],
            "source_project_id": m.project_id,
            "target_project_id": m.project_id,
        });
        let rest = json!({
            "labels": [],
            "draft": draft,
            "work_in_progress": draft,
            "milestone": null,
            "merge_when_pipeline_succeeds": false,
            "merge_status": "can_be_merged",
            "detailed_merge_status": if draft { "draft_status" } else { "mergeable" },
            "sha": format!("{:040x}", m.id),
            "merge_commit_sha": null,
            "squash_commit_sha": null,
            "discussion_locked": null,
            "should_remove_source_branch": null,
            "force_remove_source_branch": false,
            "reference": reference,
            "references": {
                "short": reference,
                "relative": reference,
                "full": format!("{path}{reference}"),
            },
            "web_url": format!("https://{}/{path}/-/merge_requests/{}", self.host, m.iid),
            "time_stats": {"time_estimate": 0, "total_time_spent": 0,
                           "human_time_estimate": null, "human_total_time_spent": null},
            "squash": false,
            "task_completion_status": {"count": 0, "completed_count": 0},
            "has_conflicts": false,
            "blocking_discussions_resolved": true,
        });
        if let (Some(mr), Value::Object(rest)) = (mr.as_object_mut(), rest) {
            mr.extend(rest);
        }
        mr
    }

    pub fn note_json(&self, d: &FakeDiscussion, n: &FakeNote) -> Value {
        let noteable_id = self
            .merge_requests
            .iter()
            .find(|m| m.project_id == d.project_id && m.iid == d.iid)
            .map_or(0, |m| m.id);
        let kind = match (&n.position, d.individual_note) {
            (Some(_), _) => json!("DiffNote"),
            (None, false) => json!("DiscussionNote"),
            (None, true) => Value::Null,
        };
        let mut note = json!({
            "id": n.id,
            "type": kind,
            "body": n.body,
            "attachment": null,
            "author": self.user_json(&n.author),
            "created_at": TIME,
            "updated_at": TIME,
            "system": n.system,
            "noteable_id": noteable_id,
            "noteable_type": "MergeRequest",
            "project_id": d.project_id,
            "noteable_iid": d.iid,
            "commit_id": null,
            "resolvable": !d.individual_note,
            "confidential": false,
            "internal": false,
        });
        if let Some((path, line)) = &n.position {
            note["position"] = json!({
                "base_sha": "0".repeat(40), "start_sha": "0".repeat(40), "head_sha": "1".repeat(40),
                "old_path": path, "new_path": path, "position_type": "text",
                "old_line": null, "new_line": line,
            });
            note["resolved"] = json!(false);
        }
        note
    }

    pub fn discussion_json(&self, d: &FakeDiscussion) -> Value {
        json!({
            "id": d.id,
            "individual_note": d.individual_note,
            "notes": d.notes.iter().map(|n| self.note_json(d, n)).collect::<Vec<_>>(),
        })
    }

    pub fn pipeline_json(&self, p: &FakePipeline) -> Value {
        let path = self.project_path(p.project_id);
        json!({
            "id": p.id,
            "iid": p.id,
            "project_id": p.project_id,
            "name": p.name,
            "status": p.status,
            "source": "merge_request_event",
            "ref": p.git_ref,
            "sha": p.sha,
            "before_sha": "0".repeat(40),
            "tag": false,
            "yaml_errors": null,
            "user": self.user_json(&self.bot),
            "created_at": TIME,
            "updated_at": TIME,
            "started_at": TIME,
            "finished_at": TIME,
            "committed_at": null,
            "duration": 42,
            "queued_duration": 1,
            "coverage": null,
            "web_url": format!("https://{}/{path}/-/pipelines/{}", self.host, p.id),
            "detailed_status": {"icon": format!("status_{}", p.status), "text": p.status,
                                "label": p.status, "group": p.status},
        })
    }

    pub fn job_json(&self, p: &FakePipeline, j: &FakeJob) -> Value {
        let path = self.project_path(p.project_id);
        json!({
            "id": j.id,
            "status": j.status,
            "stage": j.stage,
            "name": j.name,
            "ref": p.git_ref,
            "tag": false,
            "coverage": null,
            "allow_failure": false,
            "created_at": TIME,
            "started_at": TIME,
            "finished_at": TIME,
            "erased_at": null,
            "duration": 12.5,
            "queued_duration": 0.5,
            "user": self.user_json(&self.bot),
            "commit": {"id": p.sha, "short_id": &p.sha[..8], "title": "forge"},
            "pipeline": {"id": p.id, "project_id": p.project_id, "ref": p.git_ref,
                         "sha": p.sha, "status": p.status},
            "failure_reason": j.failure_reason,
            "web_url": format!("https://{}/{path}/-/jobs/{}", self.host, j.id),
            "project": {"ci_job_token_scope_enabled": false},
            "artifacts": [],
            "artifacts_expire_at": null,
            "runner": null,
            "tag_list": [],
        })
    }
}
