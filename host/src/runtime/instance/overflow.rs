//! Telling a stack overflow from the other traps.
//!
//! A guest has two stacks. WebAssembly's own call stack is wasmtime's, and
//! running out of it is `Trap::StackOverflow`. But Rust and C guests also
//! keep a stack in linear memory (locals whose address is taken, arrays):
//! their toolchains put it at the bottom of memory (`--stack-first`) with
//! the stack pointer moving down from its top. Past address 0 the pointer
//! wraps to just below 4 GiB, beyond any 32-bit memory, and the next access
//! traps as a plain "out of bounds memory access".
//!
//! Which of the two a "out of bounds memory access" is, is read from the
//! evidence wasmtime gives:
//! - when the access faulted in hardware, wasmtime attaches its address:
//!   an overflow is an address in the last MiB below 4 GiB (where a
//!   wrapped stack pointer lands) with recursion on the backtrace (one
//!   function several times). A wild or too-large index lands elsewhere;
//!   a read just below a null pointer lands there too, but is only taken
//!   for an overflow deep in a recursion;
//! - when a bounds-checked operation refused it (`memory.copy` and
//!   `memory.fill`, which Rust's frame set-up uses, report no address), an
//!   overflow is runaway recursion: every captured frame (wasmtime keeps
//!   the innermost 20) repeats a cycle of at most 4 functions, past at
//!   most 2 leaf helpers. Only a real out-of-bounds copy at least 20
//!   recursive frames deep looks the same; the log record keeps wasmtime's
//!   own trap text for that case.
//!
//! Anything else is reported as wasmtime names it.

use wasmtime::{Trap, WasmBacktrace};

/// Which stack ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// WebAssembly's call stack (wasmtime's `max_wasm_stack`).
    Native,
    /// The stack the guest's toolchain keeps in linear memory.
    Linear,
}

/// Faulting addresses at or above this are a stack pointer that went below
/// 0 and wrapped (a frame larger than 1 MiB is not a realistic frame).
const WRAPPED_STACK_FLOOR: u64 = (1 << 32) - (1 << 20);

/// A function on the captured backtrace at least this often is recursion.
const RECURSION_REPEATS: usize = 4;

/// Frames wasmtime captures (its default `wasm_backtrace_max_frames`): a
/// runaway recursion fills them all.
const CAPTURED_FRAMES: usize = 20;
/// Innermost frames that may be leaf helpers of the recursion (`memcpy`).
const LEAF_FRAMES: usize = 2;
/// Longest cycle of mutually recursive functions recognised.
const MAX_CYCLE: usize = 4;

/// The stack that overflowed, when `err` (whose trap is `trap`) is a stack
/// overflow.
pub fn overflowed(err: &wasmtime::Error, trap: Trap) -> Option<Stack> {
    match trap {
        Trap::StackOverflow => Some(Stack::Native),
        Trap::MemoryOutOfBounds => {
            let frames = frames(err);
            let overflow = match fault_address(err) {
                Some(address) => address >= WRAPPED_STACK_FLOOR && recursing(&frames),
                None => runaway(&frames),
            };
            overflow.then_some(Stack::Linear)
        }
        _ => None,
    }
}

/// What the user reads: what happened and what raises the limit.
pub fn message(stack: Stack) -> String {
    match stack {
        Stack::Native => "the guest overflowed its stack and trapped: its recursion ran past WebAssembly's call stack, which octet-wasm fixes at wasmtime's 512 KiB; the extension's author must recurse less deeply".to_owned(),
        Stack::Linear => "the guest overflowed its stack and trapped: its recursion ran past the stack its toolchain reserves in linear memory (1 MiB unless the author chose otherwise); the extension's author raises it when linking (`-C link-arg=-zstack-size=<bytes>` for Rust, `-Wl,-z,stack-size=<bytes>` for C) or recurses less deeply".to_owned(),
    }
}

/// The guest address of a memory fault, from the context wasmtime adds to
/// the error ("memory fault at wasm address 0x... in linear memory of size
/// 0x..."; wasmtime is pinned, and a unit test holds it to this text).
fn fault_address(err: &wasmtime::Error) -> Option<u64> {
    err.chain().find_map(|cause| {
        let text = cause.to_string();
        let hex = text.strip_prefix("memory fault at wasm address 0x")?;
        let end = hex.find(|c: char| !c.is_ascii_hexdigit())?;
        u64::from_str_radix(&hex[..end], 16).ok()
    })
}

/// The captured frames, innermost first, as (module name, function index).
fn frames(err: &wasmtime::Error) -> Vec<(Option<String>, u32)> {
    err.downcast_ref::<WasmBacktrace>()
        .map(|trace| {
            trace
                .frames()
                .iter()
                .map(|frame| (frame.module().name().map(str::to_owned), frame.func_index()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether one function is on the backtrace several times.
fn recursing<T: PartialEq>(frames: &[T]) -> bool {
    frames
        .iter()
        .any(|frame| frames.iter().filter(|other| *other == frame).count() >= RECURSION_REPEATS)
}

/// Whether the captured backtrace is full and, past at most
/// [`LEAF_FRAMES`] innermost frames, one cycle of at most [`MAX_CYCLE`]
/// functions repeated to its end.
fn runaway<T: PartialEq>(frames: &[T]) -> bool {
    frames.len() >= CAPTURED_FRAMES
        && (0..=LEAF_FRAMES).any(|skip| {
            let rest = &frames[skip..];
            (1..=MAX_CYCLE).any(|cycle| rest.iter().zip(&rest[cycle..]).all(|(a, b)| a == b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::{Engine, Instance, Module, Store};

    fn leb(mut n: u32, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn section(id: u8, body: &[u8], out: &mut Vec<u8>) {
        out.push(id);
        leb(body.len() as u32, out);
        out.extend_from_slice(body);
    }

    /// A core module with one page of memory and global 0 as a shadow
    /// stack pointer starting at its top (64 KiB), exporting:
    /// - `shadow`: pushes a 64-byte frame, writes to it, recurses (the
    ///   pointer wraps below 0 after 1,024 frames);
    /// - `native`: recurses with no memory use at all;
    /// - `below_null`: reads 16 bytes below address 0, no recursion;
    /// - `deep_wild`: recurses 50 deep, then reads at 128 KiB (past the
    ///   memory, not near 4 GiB);
    /// - `shadow_copy`: like `shadow`, but fills each frame with
    ///   `memory.copy`, which reports no faulting address (as Rust's frame
    ///   set-up does);
    /// - `copy_wild`: one `memory.copy` to 128 KiB, no recursion.
    fn module() -> Vec<u8> {
        let bodies: [&[u8]; 6] = [
            &[
                0x23, 0x00, 0x41, 0xC0, 0x00, 0x6B, 0x24, 0x00, // sp -= 64
                0x23, 0x00, 0x41, 0x00, 0x36, 0x02, 0x00, // *sp = 0
                0x10, 0x00, 0x0B, // shadow()
            ],
            &[0x10, 0x01, 0x0B],
            &[0x41, 0x70, 0x28, 0x02, 0x00, 0x1A, 0x0B],
            &[
                0x23, 0x01, 0x41, 0x01, 0x6A, 0x24, 0x01, // n += 1
                0x23, 0x01, 0x41, 0x32, 0x4F, 0x04, 0x40, // if n >= 50
                0x41, 0x80, 0x80, 0x08, 0x28, 0x02, 0x00, 0x1A, 0x0B, // load 128 KiB
                0x10, 0x03, 0x0B, // deep_wild()
            ],
            &[
                0x23, 0x00, 0x41, 0xC0, 0x00, 0x6B, 0x24, 0x00, // sp -= 64
                0x23, 0x00, 0x41, 0x00, 0x41, 0xC0, 0x00, 0xFC, 0x0A, 0x00,
                0x00, // memory.copy(sp, 0, 64)
                0x10, 0x04, 0x0B, // shadow_copy()
            ],
            &[
                0x41, 0x80, 0x80, 0x08, 0x41, 0x00, 0x41, 0xC0, 0x00, 0xFC, 0x0A, 0x00, 0x00,
                0x0B, // memory.copy(128 KiB, 0, 64)
            ],
        ];
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        section(1, &[0x01, 0x60, 0x00, 0x00], &mut wasm);
        section(3, &[0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], &mut wasm);
        section(5, &[0x01, 0x00, 0x01], &mut wasm);
        section(
            6,
            &[
                0x02, 0x7F, 0x01, 0x41, 0x80, 0x80, 0x04, 0x0B, 0x7F, 0x01, 0x41, 0x00, 0x0B,
            ],
            &mut wasm,
        );
        let names = [
            "shadow",
            "native",
            "below_null",
            "deep_wild",
            "shadow_copy",
            "copy_wild",
        ];
        let mut exports = vec![names.len() as u8];
        for (index, name) in names.iter().enumerate() {
            exports.push(name.len() as u8);
            exports.extend_from_slice(name.as_bytes());
            exports.extend_from_slice(&[0x00, index as u8]);
        }
        section(7, &exports, &mut wasm);
        let mut code = vec![bodies.len() as u8];
        for body in bodies {
            leb(body.len() as u32 + 1, &mut code);
            code.push(0x00);
            code.extend_from_slice(body);
        }
        section(10, &code, &mut wasm);
        wasm
    }

    fn trap_of(export: &str) -> (wasmtime::Error, Trap) {
        let engine = Engine::default();
        let module = Module::new(&engine, module()).expect("the test module is valid");
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiate");
        let func = instance
            .get_typed_func::<(), ()>(&mut store, export)
            .expect("export");
        let err = func.call(&mut store, ()).expect_err("it traps");
        let trap = *err.downcast_ref::<Trap>().expect("a trap");
        (err, trap)
    }

    #[test]
    fn a_wrapped_shadow_stack_is_an_overflow() {
        let (err, trap) = trap_of("shadow");
        assert_eq!(trap, Trap::MemoryOutOfBounds);
        // The frame store at the wrapped pointer, 64 bytes below 4 GiB.
        assert_eq!(fault_address(&err), Some((1 << 32) - 64), "{err:#}");
        assert_eq!(overflowed(&err, trap), Some(Stack::Linear));
        assert!(message(Stack::Linear).contains("-zstack-size"));
    }

    /// The probe's `recurse` overflows this way: Rust's frame set-up
    /// copies with `memory.copy`, refused with no address.
    #[test]
    fn a_wrapped_shadow_stack_without_an_address_is_an_overflow() {
        let (err, trap) = trap_of("shadow_copy");
        assert_eq!(trap, Trap::MemoryOutOfBounds);
        assert_eq!(fault_address(&err), None, "{err:#}");
        assert_eq!(overflowed(&err, trap), Some(Stack::Linear));
    }

    #[test]
    fn the_native_stack_is_wasmtimes_own_trap() {
        let (err, trap) = trap_of("native");
        assert_eq!(overflowed(&err, trap), Some(Stack::Native));
        assert!(message(Stack::Native).starts_with("the guest overflowed its stack"));
    }

    #[test]
    fn real_out_of_bounds_bugs_keep_their_name() {
        // Near 4 GiB but no recursion: a read below a null pointer.
        let (err, trap) = trap_of("below_null");
        assert_eq!(fault_address(&err), Some((1 << 32) - 16), "{err:#}");
        assert_eq!(overflowed(&err, trap), None);
        // Deep recursion, but the address is an ordinary wild one.
        let (err, trap) = trap_of("deep_wild");
        assert_eq!(trap, Trap::MemoryOutOfBounds);
        assert_eq!(fault_address(&err), Some(128 << 10), "{err:#}");
        assert_eq!(overflowed(&err, trap), None);
        // A refused copy outside any recursion.
        let (err, trap) = trap_of("copy_wild");
        assert_eq!((trap, fault_address(&err)), (Trap::MemoryOutOfBounds, None));
        assert_eq!(overflowed(&err, trap), None);
    }

    #[test]
    fn runaway_recursion_fills_the_backtrace_with_one_cycle() {
        let repeat = |cycle: &[u32], leaves: &[u32]| -> Vec<u32> {
            let mut frames = leaves.to_vec();
            frames.extend(
                cycle
                    .iter()
                    .copied()
                    .cycle()
                    .take(CAPTURED_FRAMES - leaves.len()),
            );
            frames
        };
        assert!(runaway(&repeat(&[7], &[])));
        assert!(runaway(&repeat(&[7, 8, 9], &[])));
        assert!(runaway(&repeat(&[7, 8], &[1, 2])));
        // Too many leaves, too long a cycle, too few frames, no cycle.
        assert!(!runaway(&repeat(&[7], &[1, 2, 3])));
        assert!(!runaway(&repeat(&[1, 2, 3, 4, 5], &[])));
        assert!(!runaway(&[7; CAPTURED_FRAMES - 1]));
        assert!(!runaway(&(0..CAPTURED_FRAMES as u32).collect::<Vec<_>>()));
        assert!(recursing(&[1, 7, 2, 7, 7, 3, 7]));
        assert!(!recursing(&[1, 7, 2, 7, 7, 3]));
    }
}
