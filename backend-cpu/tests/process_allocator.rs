//! `tune_process_allocator`, called first in `main`, keeps a large block that one thread frees faulted
//! in for the next thread that allocates one: the pattern of an XLA CPU program's per-run temporaries.
//! Without it, each thread's block above 64 MiB is a fresh mapping that faults in every page again.
//!
//! A test binary without libtest's harness, so that `main` runs before any other thread exists.

use oxtorch_backend_cpu::malloc::{tune_process_allocator, AllocatorTuning};

/// The block each round allocates: above glibc's 64 MiB per-thread heap limit.
const BLOCK: usize = 160 << 20;
const PAGE: usize = 4096;

/// The process's minor page faults so far (`/proc/self/stat`, field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    let after_name = &stat[stat.rfind(')').expect("stat has (comm)") + 2..];
    // Fields after the name start at field 3 (state); minflt is field 10.
    after_name.split_whitespace().nth(7).and_then(|f| f.parse().ok()).expect("minflt")
}

/// Faults taken while a fresh thread allocates `BLOCK` bytes, writes every page and frees them.
fn faults_of_one_thread_round() -> u64 {
    let before = minor_faults();
    std::thread::spawn(|| {
        let mut block: Vec<u8> = Vec::with_capacity(BLOCK);
        let p = block.as_mut_ptr();
        for i in (0..BLOCK).step_by(PAGE) {
            // SAFETY: `i < BLOCK`, inside the allocation; volatile so that every page is touched.
            unsafe { p.add(i).write_volatile(1) };
        }
        drop(block);
    })
    .join()
    .expect("allocating thread");
    minor_faults() - before
}

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert_eq!(tune_process_allocator(), AllocatorTuning::Unsupported);
        return;
    }
    if std::env::var("OXTORCH_MALLOC_TUNING").is_ok_and(|v| v == "0") {
        assert_eq!(tune_process_allocator(), AllocatorTuning::Disabled);
        println!("process_allocator: OXTORCH_MALLOC_TUNING=0, nothing to check");
        return;
    }
    assert_eq!(tune_process_allocator(), AllocatorTuning::Applied);

    let pages = (BLOCK / PAGE) as u64;
    let first = faults_of_one_thread_round();
    let later: Vec<u64> = (0..3).map(|_| faults_of_one_thread_round()).collect();
    println!("process_allocator: {pages} pages; faults first round {first}, later rounds {later:?}");
    // The first round faults the block in: one fault per 4 KiB page, or a few hundred where the
    // kernel backs it with huge pages (`transparent_hugepage=always`). Too few to compare against
    // means the measurement sees nothing.
    if first >= 64 {
        // Later threads reuse the freed block instead of mapping it afresh.
        for (round, &faults) in later.iter().enumerate() {
            assert!(faults * 4 <= first, "round {} took {faults} faults, the first {first}", round + 2);
        }
    } else {
        println!("process_allocator: the first round took only {first} faults; reuse not measurable here");
    }

    // Once other threads run, the arena choice can no longer be made for them, and the call says so.
    let (parked_tx, parked_rx) = std::sync::mpsc::channel::<()>();
    let parked = std::thread::spawn(move || parked_rx.recv().ok());
    match tune_process_allocator() {
        AllocatorTuning::TooLate { threads } => assert!(threads >= 2, "threads {threads}"),
        other => panic!("expected TooLate with a second thread running, got {other:?}"),
    }
    drop(parked_tx);
    parked.join().expect("parked thread");
    println!("process_allocator: ok");
}
