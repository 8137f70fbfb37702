//! The two discussion routes forge needs that the `gitlab` crate (0.1905) does not have:
//! one discussion by id, and a reply in it. Written as the crate's own endpoints are, so
//! they go through the same client, encoding and error handling as every other call.

use std::borrow::Cow;

use gitlab::api::common::NameOrId;
use gitlab::api::endpoint_prelude::{BodyError, Endpoint, FormParams, Method};

/// `GET /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id`.
pub(crate) struct MergeRequestDiscussion<'a> {
    pub(crate) project: NameOrId<'a>,
    pub(crate) merge_request: u64,
    pub(crate) discussion: &'a str,
}

impl Endpoint for MergeRequestDiscussion<'_> {
    fn method(&self) -> Method {
        Method::GET
    }

    fn endpoint(&self) -> Cow<'static, str> {
        format!(
            "projects/{}/merge_requests/{}/discussions/{}",
            self.project,
            self.merge_request,
            path_segment(self.discussion)
        )
        .into()
    }
}

/// `POST /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes`
/// with `body`: a reply in the thread (a note on its own becomes a thread by it).
pub(crate) struct CreateMergeRequestDiscussionNote<'a> {
    pub(crate) project: NameOrId<'a>,
    pub(crate) merge_request: u64,
    pub(crate) discussion: &'a str,
    pub(crate) body: &'a str,
}

impl Endpoint for CreateMergeRequestDiscussionNote<'_> {
    fn method(&self) -> Method {
        Method::POST
    }

    fn endpoint(&self) -> Cow<'static, str> {
        format!(
            "projects/{}/merge_requests/{}/discussions/{}/notes",
            self.project,
            self.merge_request,
            path_segment(self.discussion)
        )
        .into()
    }

    fn body(&self) -> Result<Option<(&'static str, Vec<u8>)>, BodyError> {
        let mut params = FormParams::default();
        params.push("body", self.body);
        params.into_body()
    }
}

/// A discussion id is 40 hex digits; anything else (it comes from a webhook) is escaped so
/// it stays one path segment.
fn path_segment(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_body() {
        let d = MergeRequestDiscussion {
            project: "group/sub/app".into(),
            merge_request: 4,
            discussion: "6a9c1750b37d513a43987b574953fceb50b03ce7",
        };
        assert_eq!(
            d.endpoint(),
            "projects/group%2Fsub%2Fapp/merge_requests/4/discussions/6a9c1750b37d513a43987b574953fceb50b03ce7"
        );
        let r = CreateMergeRequestDiscussionNote {
            project: "g/p".into(),
            merge_request: 1,
            discussion: "../x y",
            body: "done in abc & ok",
        };
        assert_eq!(
            r.endpoint(),
            "projects/g%2Fp/merge_requests/1/discussions/..%2Fx%20y/notes"
        );
        let (mime, body) = r.body().unwrap().unwrap();
        assert_eq!(mime, "application/x-www-form-urlencoded");
        assert_eq!(String::from_utf8(body).unwrap(), "body=done+in+abc+%26+ok");
    }
}
