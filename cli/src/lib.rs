//! composition root
