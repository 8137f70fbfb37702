mod file_at;
mod is_repository;
mod review_range;
