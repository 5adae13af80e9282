//! The CPU wave emulator: executes the generated HIP kernels themselves on the CPU, so AMD
//! results can be checked without an AMD GPU.
//!
//! The emulated text is the generated kernel's text with only its prelude replaced
//! ([`source::emulated_source`]): each block's threads run as host threads with a real block
//! barrier and real shared (LDS) arrays; waves are 64 lanes on CDNA and 32 on RDNA; each matrix
//! instruction runs for its whole wave at once with AMD's documented lane layouts
//! ([`layouts`], written from AMD's Matrix Instruction Calculator independently of the code
//! generator's tables); AddressSanitizer catches out-of-bounds accesses. It is a [`Backend`]
//! (`backend::Emulator`), so the same harness and validation run on it as on a GPU.
//!
//! [`Backend`]: crate::backend::Backend

pub mod backend;
pub mod compile;
pub mod layouts;
pub mod prelude;
pub mod source;

pub use backend::Emulator;
pub use compile::{Checker, HostClang};
pub use layouts::Sabotage;
