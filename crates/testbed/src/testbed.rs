//! [`Testbed`]: a set of namespaces (by role name) and the veth pairs
//! between them, all removed on `Drop`: veths first, then namespaces.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};

use crate::netns::{Netns, VethPair};

/// Namespaces by role (`"sender"`, `"router"`, ...) and veth pairs between
/// them. Dropping it removes everything it created.
#[derive(Debug, Default)]
pub struct Testbed {
    // Field order is drop order: links before namespaces.
    veths: Vec<VethPair>,
    namespaces: BTreeMap<String, Netns>,
}

/// Builds a [`Testbed`]: `Testbed::builder().ns("a").ns("b").veth("a", "b", 1).build()`.
/// Nothing is created until [`TestbedBuilder::build`]; if building fails
/// half-way, what was created is removed again.
#[derive(Debug, Default, Clone)]
pub struct TestbedBuilder {
    roles: Vec<String>,
    veths: Vec<(String, String, u32)>,
}

impl TestbedBuilder {
    /// Add a namespace for `role` (a short tag; the first three characters
    /// go into the namespace's name).
    pub fn ns(mut self, role: &str) -> Self {
        self.roles.push(role.to_string());
        self
    }

    /// Add a veth pair between the namespaces of roles `a` and `b`, with
    /// `queues` TX/RX queues per end.
    pub fn veth(mut self, a: &str, b: &str, queues: u32) -> Self {
        self.veths.push((a.to_string(), b.to_string(), queues));
        self
    }

    /// Create everything.
    pub fn build(self) -> Result<Testbed> {
        let mut tb = Testbed::default();
        for role in &self.roles {
            if tb.namespaces.contains_key(role) {
                bail!("role {role:?} given twice");
            }
            let tag: String = role.chars().take(3).collect();
            let ns = Netns::new(&tag).with_context(|| format!("namespace for {role}"))?;
            tb.namespaces.insert(role.clone(), ns);
        }
        for (a, b, q) in &self.veths {
            let pair = VethPair::new(tb.ns(a)?, tb.ns(b)?, *q)
                .with_context(|| format!("veth {a} <-> {b}"))?;
            tb.veths.push(pair);
        }
        Ok(tb)
    }
}

impl Testbed {
    /// Start describing a testbed.
    pub fn builder() -> TestbedBuilder {
        TestbedBuilder::default()
    }

    /// The namespace of `role`.
    pub fn ns(&self, role: &str) -> Result<&Netns> {
        self.namespaces
            .get(role)
            .with_context(|| format!("no namespace with role {role:?}"))
    }

    /// All veth pairs, in creation order.
    pub fn veths(&self) -> &[VethPair] {
        &self.veths
    }

    /// The `i`-th veth pair (creation order).
    pub fn veth(&self, i: usize) -> &VethPair {
        &self.veths[i]
    }

    /// Roles and namespace names.
    pub fn namespaces(&self) -> impl Iterator<Item = (&str, &Netns)> {
        self.namespaces.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.veths.clear();
        self.namespaces.clear();
    }
}
