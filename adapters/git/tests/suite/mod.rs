mod is_repository;
mod review_range;
