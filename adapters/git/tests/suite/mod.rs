mod is_repository;
