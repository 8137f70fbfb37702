mod contract;
mod faults;
mod fresh_db;
