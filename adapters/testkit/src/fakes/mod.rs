//! Hand-written fakes of the ports (filled in with the app use cases).
