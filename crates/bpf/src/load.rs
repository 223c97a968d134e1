//! Loading a BPF object: aya parses the ELF, creates the maps (with sizes
//! and globals set by the caller), relocates and loads one XDP program (or,
//! [`load_raw_tracepoints`], loads and attaches tracing programs); a
//! verifier rejection comes back with the tail of the verifier's log.

use std::os::fd::AsFd;

use anyhow::{anyhow, Context, Result};
use aya::maps::{Map, MapData};
use aya::programs::{RawTracePoint, Xdp};
use aya::{Ebpf, EbpfLoader};

use crate::MmapArray;

/// A loaded object: its programs loaded, its maps created.
pub struct Loaded {
    pub ebpf: Ebpf,
}

/// Load `obj` with map sizes `entries` (name -> max_entries) and u32
/// globals `globals` (name -> value, `const volatile` in the source);
/// load the XDP program `prog`.
pub fn load(
    what: &str,
    obj: &[u8],
    entries: &[(&'static str, u32)],
    globals: &[(&'static str, u32)],
    prog: &str,
) -> Result<Loaded> {
    let mut loader = EbpfLoader::new();
    // Relocated against the kernel's BTF when it has one: the XDP
    // programs read no kernel structure, but an object's tracing programs
    // may (the fast path's egress drop counter reads two fields of each
    // device, CO-RE).
    // Without BTF their reads stay unrelocated: [`has_kernel_btf`] says
    // whether to attach them.
    let btf = has_kernel_btf().then(aya::Btf::from_sys_fs).transpose();
    let btf = btf.with_context(|| format!("{what}: the kernel's BTF ({KERNEL_BTF})"))?;
    loader.btf(btf.as_ref());
    for &(name, n) in entries {
        loader.map_max_entries(name, n.max(1));
    }
    for (name, v) in globals {
        loader.override_global(name, v, true);
    }
    let mut ebpf = loader
        .load(obj)
        .with_context(|| format!("loading the {what} BPF object"))?;
    let p: &mut Xdp = ebpf
        .program_mut(prog)
        .ok_or_else(|| anyhow!("{what}: no program {prog} in the object"))?
        .try_into()
        .with_context(|| format!("{what}: {prog} is not an XDP program"))?;
    p.load()
        .map_err(|e| anyhow!("{what}: the verifier rejected {prog}: {}", verifier_log(&e)))?;
    Ok(Loaded { ebpf })
}

/// Where the kernel offers its BTF.
const KERNEL_BTF: &str = "/sys/kernel/btf/vmlinux";

/// Whether the kernel offers its BTF, so that CO-RE reads of kernel
/// structures in a loaded object are relocated.
pub fn has_kernel_btf() -> bool {
    std::path::Path::new(KERNEL_BTF).exists()
}

/// Load `obj`, relocated against the running kernel's BTF (tracing
/// programs read kernel structures, whose layout is the kernel's: CO-RE),
/// and attach each raw tracepoint program `(prog, tracepoint)` of
/// `attach`; the attachments last as long as the returned object. Fails
/// without kernel BTF (`/sys/kernel/btf/vmlinux`) or the permission to
/// trace.
pub fn load_raw_tracepoints(what: &str, obj: &[u8], attach: &[(&str, &str)]) -> Result<Loaded> {
    let btf = aya::Btf::from_sys_fs()
        .with_context(|| format!("{what}: the kernel's BTF ({KERNEL_BTF})"))?;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(&btf))
        .load(obj)
        .with_context(|| format!("loading the {what} BPF object"))?;
    for &(prog, tracepoint) in attach {
        let p: &mut RawTracePoint = ebpf
            .program_mut(prog)
            .ok_or_else(|| anyhow!("{what}: no program {prog} in the object"))?
            .try_into()
            .with_context(|| format!("{what}: {prog} is not a raw tracepoint program"))?;
        p.load()
            .map_err(|e| anyhow!("{what}: the verifier rejected {prog}: {}", verifier_log(&e)))?;
        p.attach(tracepoint)
            .with_context(|| format!("{what}: attaching {prog} to the {tracepoint} tracepoint"))?;
    }
    Ok(Loaded { ebpf })
}

/// The error with the end of the verifier log (which says why).
fn verifier_log(e: &aya::programs::ProgramError) -> String {
    let s = match e {
        aya::programs::ProgramError::LoadError {
            io_error,
            verifier_log,
        } => {
            format!("{io_error}; log (tail):\n{verifier_log}")
        }
        other => other.to_string(),
    };
    let n = s.chars().count();
    s.chars().skip(n.saturating_sub(4000)).collect()
}

impl Loaded {
    /// The XDP program `name`.
    pub fn xdp(&mut self, name: &str) -> Result<&mut Xdp> {
        self.program(name)
    }

    /// The program `name`, of type `T` (`Xdp`, `TracePoint`, ...).
    pub fn program<'a, T>(&'a mut self, name: &str) -> Result<&'a mut T>
    where
        &'a mut aya::programs::Program: TryInto<&'a mut T, Error = aya::programs::ProgramError>,
    {
        self.ebpf
            .program_mut(name)
            .ok_or_else(|| anyhow!("no program {name}"))?
            .try_into()
            .map_err(|e| anyhow!("{name}: {e}"))
    }

    /// Map `name` (an mmapable array) mapped into our memory: `entries`
    /// values of `value_size` bytes.
    pub fn mmap(&self, name: &str, value_size: usize, entries: usize) -> Result<MmapArray> {
        let data = self.map_data(name)?;
        MmapArray::new(data.fd().as_fd(), value_size, entries)
            .with_context(|| format!("mmap of BPF map {name}"))
    }

    /// Bytes of one value of array map `name`, as the kernel created it
    /// from the object (the C type's size): what a Rust type mapped over
    /// its values must measure.
    pub fn value_size(&self, name: &str) -> Result<usize> {
        let info = self
            .map_data(name)?
            .info()
            .with_context(|| format!("BPF map {name}: its kernel information"))?;
        Ok(info.value_size() as usize)
    }

    /// A new fd for map `name` (an XSKMAP or array), for code that
    /// drives the map with its own `bpf(2)` calls.
    pub fn map_fd(&self, name: &str) -> Result<std::os::fd::OwnedFd> {
        let data = match self.ebpf.map(name) {
            Some(Map::XskMap(d) | Map::Array(d) | Map::DevMap(d)) => d,
            Some(_) => return Err(anyhow!("BPF map {name}: no fd handed out for its type")),
            None => return Err(anyhow!("no BPF map {name}")),
        };
        data.fd()
            .as_fd()
            .try_clone_to_owned()
            .with_context(|| format!("dup of BPF map {name}'s fd"))
    }

    fn map_data(&self, name: &str) -> Result<&MapData> {
        match self.ebpf.map(name) {
            Some(Map::Array(d)) => Ok(d),
            Some(_) => Err(anyhow!("BPF map {name} is not an array")),
            None => Err(anyhow!("no BPF map {name}")),
        }
    }
}
