mod contract;
mod faults;
