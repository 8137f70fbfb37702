mod contract;
mod faults;
mod tls;
