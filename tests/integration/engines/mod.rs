//! Engines and the way I/O is submitted, against fio 3.33 on the same jobs: the rest of fio's
//! Linux engine list (`linux`), and offload submission, sync_file_range and the other
//! submission options (`offload`).

mod libblkio;
mod linux;
mod offload;
