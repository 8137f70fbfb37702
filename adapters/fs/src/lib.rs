//! Sandboxed workspace file access and the artifact bundle under .forgecode/runs/<id>/.
