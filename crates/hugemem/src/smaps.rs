//! `/proc/self/smaps`: how much of a range the kernel backs with
//! transparent huge pages.

/// One mapping: `[start, end)` and its `AnonHugePages` in bytes.
pub(crate) struct Vma {
    pub start: usize,
    pub end: usize,
    pub anon_huge: u64,
}

pub(crate) fn read_self() -> Vec<Vma> {
    std::fs::read_to_string("/proc/self/smaps")
        .map(|s| parse(&s))
        .unwrap_or_default()
}

pub(crate) fn parse(text: &str) -> Vec<Vma> {
    let mut out: Vec<Vma> = Vec::new();
    for line in text.lines() {
        if let Some(kb) = line.strip_prefix("AnonHugePages:") {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            if let Some(v) = out.last_mut() {
                v.anon_huge = kb * 1024;
            }
            continue;
        }
        // A mapping header: "start-end perms offset dev inode [path]".
        let Some(range) = line.split_whitespace().next() else {
            continue;
        };
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        if let (Ok(start), Ok(end)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
            out.push(Vma {
                start,
                end,
                anon_huge: 0,
            });
        }
    }
    out
}

/// THP bytes inside `[start, end)`: a VMA wholly inside counts fully; one
/// the kernel merged with a neighbour counts at most its overlap (smaps
/// does not say where in the VMA the huge pages are).
pub(crate) fn anon_huge_in(vmas: &[Vma], start: usize, end: usize) -> u64 {
    vmas.iter()
        .filter(|v| v.start < end && v.end > start)
        .map(|v| {
            let overlap = (v.end.min(end) - v.start.max(start)) as u64;
            v.anon_huge.min(overlap)
        })
        .sum()
}
