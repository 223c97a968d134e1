//! The kernel's table as the kernel keeps it, and the route it uses per
//! prefix: what softrouter's mirror installs (`softrouter::kernel_sync`).
//!
//! Why not one route per prefix, the last event's: the kernel keeps
//! several (metrics, at one metric other types; BIRD and FRR install a
//! backup `blackhole ... metric 200` next to the real route) and uses the
//! first of the lowest metric. Deleting the backup must leave the real
//! route, an IPv6 event about one next hop of a multipath route changes
//! only that next hop, and a route through a next-hop object (`nhid`)
//! follows the object.
//!
//! The kernel's rules followed here (`net/ipv4/fib_trie.c`,
//! `net/ipv6/ip6_fib.c`, `net/ipv4/nexthop.c`):
//! - per prefix, routes in metric order; within a metric, IPv4 keeps
//!   `prepend`ed ones before and `append`ed ones after, and a `replace`
//!   takes the first's place; the first of the lowest metric is used;
//! - IPv6 joins gateway routes of one metric into one multipath route
//!   (siblings): an add at that metric adds next hops, a delete names the
//!   next hops it removes, a replace replaces the whole route; a replace
//!   takes the place of the first route of its metric that is as much a
//!   multipath candidate (gateway, no object) as it, else of the first;
//! - a next-hop object that changes changes every route using it (also
//!   through a group); one removed removes them (the kernel says nothing
//!   about those routes), a member removed shrinks its groups, an emptied
//!   group goes too.
//!
//! Events applied twice (the dump and the event before it, see
//! `crate::kernel`) change nothing the second time.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use smallvec::SmallVec;

use crate::kernel::{
    AddHow, KernelNextHop, KernelRoute, KernelTable, NextHopObject, RouteAction, RouteEvent,
};

/// Network address and prefix length.
pub type Prefix = (IpAddr, u8);

/// The followed table: every route and next-hop object the kernel keeps.
#[derive(Default, Debug)]
pub struct KernelFib {
    /// Per prefix, in the kernel's order (the first is used). Inline:
    /// most prefixes have one route with one next hop, and a full table
    /// is a million of them.
    routes: HashMap<Prefix, SmallVec<[Kept; 1]>>,
    nexthops: HashMap<u32, NextHopObject>,
    /// The prefixes with a route using each next-hop object directly.
    users: HashMap<u32, HashSet<Prefix>>,
}

impl KernelFib {
    /// The table a dump gave.
    pub fn from_table(t: KernelTable) -> KernelFib {
        let mut f = KernelFib::default();
        f.nexthops.extend(t.nexthops);
        for r in t.routes {
            // The dump is in the kernel's order.
            f.add(r, AddHow::Append);
        }
        f
    }

    /// Routes kept (of every prefix).
    pub fn len(&self) -> usize {
        self.routes.values().map(|l| l.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// What the kernel does with `prefix` now: its first route's action
    /// (a next-hop object's resolved), `None` without a route.
    pub fn choice(&self, prefix: Prefix) -> Option<RouteAction> {
        self.routes
            .get(&prefix)
            .and_then(|l| l.first())
            .map(|r| self.resolve(r))
    }

    /// Applies `ev`; returns the prefixes whose [`Self::choice`] changed,
    /// with the new one.
    pub fn apply(&mut self, ev: RouteEvent) -> Vec<(Prefix, Option<RouteAction>)> {
        let affected: Vec<Prefix> = match &ev {
            RouteEvent::Add(r, _) | RouteEvent::Del(r) => vec![r.prefix],
            RouteEvent::NextHop(id, _) | RouteEvent::NextHopDel(id) => self.users_of(*id),
            RouteEvent::Resync | RouteEvent::Flushed => Vec::new(),
        };
        let before: Vec<Option<RouteAction>> = affected.iter().map(|&p| self.choice(p)).collect();
        match ev {
            RouteEvent::Add(r, how) => self.add(r, how),
            RouteEvent::Del(r) => self.del(&r),
            RouteEvent::NextHop(id, o) => {
                self.nexthops.insert(id, o);
            }
            RouteEvent::NextHopDel(id) => self.del_nexthop(id),
            RouteEvent::Resync | RouteEvent::Flushed => {}
        }
        // A table that emptied (a daemon's full table withdrawn) gives
        // its memory back.
        if self.routes.capacity() > 4 * self.routes.len() + 1024 {
            self.routes.shrink_to_fit();
        }
        affected
            .into_iter()
            .zip(before)
            .filter_map(|(p, b)| {
                let now = self.choice(p);
                (now != b).then_some((p, now))
            })
            .collect()
    }

    /// The prefixes whose choice differs between `self` and `new` (a
    /// fresh dump), with `new`'s.
    pub fn diff(&self, new: &KernelFib) -> Vec<(Prefix, Option<RouteAction>)> {
        let mut out = Vec::new();
        for &p in new.routes.keys() {
            let now = new.choice(p);
            if self.choice(p) != now {
                out.push((p, now));
            }
        }
        for &p in self.routes.keys() {
            if !new.routes.contains_key(&p) {
                out.push((p, None));
            }
        }
        out
    }

    fn resolve(&self, r: &Kept) -> RouteAction {
        let Some(id) = r
            .nhid
            .filter(|_| matches!(r.kind, Kind::Forward | Kind::Blackhole))
        else {
            return r.action();
        };
        let single = |id: &u32| match self.nexthops.get(id) {
            Some(NextHopObject::Single(h)) => Some(*h),
            _ => None,
        };
        match self.nexthops.get(&id) {
            Some(NextHopObject::Blackhole) => RouteAction::Blackhole,
            Some(NextHopObject::Group(ids)) => {
                RouteAction::Forward(ids.iter().filter_map(single).collect())
            }
            // Unknown (not yet said): no next hop.
            _ => RouteAction::Forward(single(&id).into_iter().collect()),
        }
    }

    /// The prefixes using object `id`, directly or through a group.
    fn users_of(&self, id: u32) -> Vec<Prefix> {
        let groups = self.nexthops.iter().filter_map(|(&g, o)| match o {
            NextHopObject::Group(m) if m.contains(&id) => Some(g),
            _ => None,
        });
        let mut out: HashSet<Prefix> = HashSet::new();
        for i in std::iter::once(id).chain(groups) {
            out.extend(self.users.get(&i).into_iter().flatten());
        }
        out.into_iter().collect()
    }

    fn add(&mut self, r: KernelRoute, how: AddHow) {
        let prefix = r.prefix;
        let r = Kept::from(r);
        if let Some(id) = r.nhid {
            self.users.entry(id).or_default().insert(prefix);
        }
        let v6 = prefix.0.is_ipv6();
        let list = self.routes.entry(prefix).or_default();
        let metric = r.metric;
        if v6 && r.siblings() && how != AddHow::Replace {
            if let Some(e) = list.iter_mut().find(|x| x.metric == metric && x.siblings()) {
                for h in r.hops {
                    if !e.hops.contains(&h) {
                        e.hops.push(h);
                    }
                }
                return;
            }
        }
        if list.contains(&r) {
            // Applied twice, or the kernel saying again a route whose
            // next-hop object changed (a "replace" of itself).
            return;
        }
        if how == AddHow::Replace {
            // IPv6 replaces the first of its metric that is as much a
            // multipath candidate as the new one, else the first.
            let like = list
                .iter()
                .position(|x| x.metric == metric && (!v6 || x.siblings() == r.siblings()));
            if let Some(i) = like.or_else(|| list.iter().position(|x| x.metric == metric)) {
                let old = std::mem::replace(&mut list[i], r);
                self.forget_user(prefix, old.nhid);
                return;
            }
        }
        let at = if how == AddHow::Create && !v6 {
            // `prepend` (an `add` finds none at its metric).
            list.iter().position(|x| x.metric >= metric)
        } else {
            list.iter().position(|x| x.metric > metric)
        };
        list.insert(at.unwrap_or(list.len()), r);
    }

    fn del(&mut self, r: &KernelRoute) {
        let prefix = r.prefix;
        let Some(list) = self.routes.get_mut(&prefix) else {
            return;
        };
        let r = Kept::from(r.clone());
        if prefix.0.is_ipv6() && r.siblings() {
            // The next hops named leave the multipath route.
            if let Some(i) = list
                .iter()
                .position(|x| x.metric == r.metric && x.siblings())
            {
                list[i].hops.retain(|h| !r.hops.contains(h));
                if list[i].hops.is_empty() {
                    list.remove(i);
                }
            }
        } else {
            let same_kind = |x: &Kept| x.metric == r.metric && x.nhid == r.nhid && x.kind == r.kind;
            let i = list
                .iter()
                .position(|x| *x == r)
                .or_else(|| list.iter().position(same_kind));
            if let Some(i) = i {
                list.remove(i);
            }
        }
        if list.is_empty() {
            self.routes.remove(&prefix);
        }
        self.forget_user(prefix, r.nhid);
    }

    /// Object `id` is gone: its routes with it, its groups shrink (and go
    /// when empty).
    fn del_nexthop(&mut self, id: u32) {
        if self.nexthops.remove(&id).is_none() && !self.users.contains_key(&id) {
            return;
        }
        let mut emptied = Vec::new();
        for (&g, o) in self.nexthops.iter_mut() {
            if let NextHopObject::Group(m) = o {
                if m.contains(&id) {
                    m.retain(|&x| x != id);
                    if m.is_empty() {
                        emptied.push(g);
                    }
                }
            }
        }
        for p in self.users.remove(&id).unwrap_or_default() {
            if let Some(list) = self.routes.get_mut(&p) {
                list.retain(|x| x.nhid != Some(id));
                if list.is_empty() {
                    self.routes.remove(&p);
                }
            }
        }
        for g in emptied {
            self.del_nexthop(g);
        }
    }

    /// `prefix` may no longer use object `id`.
    fn forget_user(&mut self, prefix: Prefix, id: Option<u32>) {
        let Some(id) = id else { return };
        let still = self
            .routes
            .get(&prefix)
            .is_some_and(|l| l.iter().any(|x| x.nhid == Some(id)));
        if !still {
            if let Some(u) = self.users.get_mut(&id) {
                u.remove(&prefix);
                if u.is_empty() {
                    self.users.remove(&id);
                }
            }
        }
    }
}

/// What a route does, without its next hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward,
    Blackhole,
    Unreachable,
    Prohibit,
}

/// A route as kept (its prefix is the key it is kept under).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    metric: u32,
    nhid: Option<u32>,
    kind: Kind,
    /// None for a route through an object: the object decides (the
    /// expansion the kernel adds in its compatibility mode would make one
    /// route look like two once the object changes).
    hops: SmallVec<[KernelNextHop; 1]>,
}

impl From<KernelRoute> for Kept {
    fn from(r: KernelRoute) -> Kept {
        let (kind, hops) = match r.action {
            RouteAction::Forward(h) if r.nhid.is_none() => (Kind::Forward, SmallVec::from_vec(h)),
            RouteAction::Forward(_) => (Kind::Forward, SmallVec::new()),
            RouteAction::Blackhole => (Kind::Blackhole, SmallVec::new()),
            RouteAction::Unreachable => (Kind::Unreachable, SmallVec::new()),
            RouteAction::Prohibit => (Kind::Prohibit, SmallVec::new()),
        };
        Kept {
            metric: r.metric,
            nhid: r.nhid,
            kind,
            hops,
        }
    }
}

impl Kept {
    /// What it does by itself (next-hop objects aside).
    fn action(&self) -> RouteAction {
        match self.kind {
            Kind::Forward => RouteAction::Forward(self.hops.to_vec()),
            Kind::Blackhole => RouteAction::Blackhole,
            Kind::Unreachable => RouteAction::Unreachable,
            Kind::Prohibit => RouteAction::Prohibit,
        }
    }

    /// An IPv6 route the kernel joins with others of its metric into one
    /// multipath route (`rt6_qualify_for_ecmp`: gateways, no object).
    fn siblings(&self) -> bool {
        self.nhid.is_none()
            && self.kind == Kind::Forward
            && !self.hops.is_empty()
            && self.hops.iter().all(|h| h.gateway.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        let (a, l) = s.split_once('/').unwrap();
        (a.parse().unwrap(), l.parse().unwrap())
    }

    fn via(prefix: &str, metric: u32, gws: &[&str]) -> KernelRoute {
        KernelRoute {
            prefix: p(prefix),
            metric,
            action: RouteAction::Forward(gws.iter().map(|g| hop(g)).collect()),
            nhid: None,
        }
    }

    fn hop(g: &str) -> KernelNextHop {
        KernelNextHop {
            gateway: Some(g.parse().unwrap()),
            ifindex: 2,
        }
    }

    fn drop(prefix: &str, metric: u32, action: RouteAction) -> KernelRoute {
        KernelRoute {
            prefix: p(prefix),
            metric,
            action,
            nhid: None,
        }
    }

    fn fwd(gws: &[&str]) -> Option<RouteAction> {
        Some(RouteAction::Forward(gws.iter().map(|g| hop(g)).collect()))
    }

    /// Issue 22's reproducer: the lowest metric wins, deleting the other
    /// leaves it, a backup blackhole stays a backup.
    #[test]
    fn the_lowest_metric_is_used() {
        let mut f = KernelFib::default();
        let q = "198.19.64.0/24";
        f.apply(RouteEvent::Add(via(q, 10, &["198.19.0.2"]), AddHow::Create));
        let c = f.apply(RouteEvent::Add(via(q, 20, &["198.19.0.3"]), AddHow::Create));
        assert!(c.is_empty(), "a worse route changes nothing: {c:?}");
        assert_eq!(f.choice(p(q)), fwd(&["198.19.0.2"]));
        f.apply(RouteEvent::Add(
            drop(q, 200, RouteAction::Blackhole),
            AddHow::Create,
        ));
        f.apply(RouteEvent::Del(via(q, 20, &["198.19.0.3"])));
        assert_eq!(f.choice(p(q)), fwd(&["198.19.0.2"]));
        let c = f.apply(RouteEvent::Del(via(q, 10, &["198.19.0.2"])));
        assert_eq!(c, [(p(q), Some(RouteAction::Blackhole))]);
        let c = f.apply(RouteEvent::Del(drop(q, 200, RouteAction::Blackhole)));
        assert_eq!(c, [(p(q), None)]);
        assert!(f.is_empty());
    }

    /// IPv6 multipath: next hops join and leave one at a time.
    #[test]
    fn ipv6_siblings_join_and_leave() {
        let mut f = KernelFib::default();
        let q = "2001:2:0:64::/64";
        f.apply(RouteEvent::Add(via(q, 10, &["2001:2::2"]), AddHow::Create));
        f.apply(RouteEvent::Add(
            via(q, 10, &["2001:2::3", "2001:2::2"]),
            AddHow::Append,
        ));
        assert_eq!(f.choice(p(q)), fwd(&["2001:2::2", "2001:2::3"]));
        f.apply(RouteEvent::Del(via(q, 10, &["2001:2::2"])));
        assert_eq!(f.choice(p(q)), fwd(&["2001:2::3"]));
        f.apply(RouteEvent::Add(via(q, 10, &["2001:2::4"]), AddHow::Replace));
        assert_eq!(f.choice(p(q)), fwd(&["2001:2::4"]));
        assert_eq!(f.len(), 1);
    }

    /// A route through a group follows the group's members; removing the
    /// last member removes group and route.
    #[test]
    fn routes_follow_their_next_hop_objects() {
        let mut f = KernelFib::default();
        let q = "198.19.65.0/24";
        f.apply(RouteEvent::NextHop(
            1,
            NextHopObject::Single(hop("198.18.0.2")),
        ));
        f.apply(RouteEvent::NextHop(
            2,
            NextHopObject::Single(hop("198.18.0.3")),
        ));
        f.apply(RouteEvent::NextHop(10, NextHopObject::Group(vec![1, 2])));
        let mut r = via(q, 5, &["198.18.0.2", "198.18.0.3"]);
        r.nhid = Some(10);
        f.apply(RouteEvent::Add(r.clone(), AddHow::Create));
        assert_eq!(f.choice(p(q)), fwd(&["198.18.0.2", "198.18.0.3"]));
        let c = f.apply(RouteEvent::NextHop(
            2,
            NextHopObject::Single(hop("198.18.0.4")),
        ));
        assert_eq!(c, [(p(q), fwd(&["198.18.0.2", "198.18.0.4"]))]);
        // The kernel's notification of the route, expanded: no change.
        r.action = fwd(&["198.18.0.2", "198.18.0.4"]).unwrap();
        assert!(f.apply(RouteEvent::Add(r, AddHow::Replace)).is_empty());
        f.apply(RouteEvent::NextHopDel(1));
        assert_eq!(f.choice(p(q)), fwd(&["198.18.0.4"]));
        let c = f.apply(RouteEvent::NextHopDel(2));
        assert_eq!(c, [(p(q), None)]);
        assert!(f.is_empty() && f.users.is_empty());
    }

    /// When a next-hop object changes the kernel says its routes again
    /// as replaced: that replaces nothing else at their metric.
    #[test]
    fn a_route_said_again_replaces_no_other() {
        let mut f = KernelFib::default();
        let q = "198.19.67.0/24";
        f.apply(RouteEvent::NextHop(
            1,
            NextHopObject::Single(hop("198.18.0.2")),
        ));
        let mut r = via(q, 5, &[]);
        r.nhid = Some(1);
        f.apply(RouteEvent::Add(r.clone(), AddHow::Create));
        // `ip route prepend`: before it, and used.
        f.apply(RouteEvent::Add(via(q, 5, &["198.18.0.7"]), AddHow::Create));
        assert_eq!(f.choice(p(q)), fwd(&["198.18.0.7"]));
        f.apply(RouteEvent::NextHop(
            1,
            NextHopObject::Single(hop("198.18.0.3")),
        ));
        r.action = fwd(&["198.18.0.3"]).unwrap();
        assert!(f.apply(RouteEvent::Add(r, AddHow::Replace)).is_empty());
        assert_eq!(f.len(), 2);
    }

    /// A dump and the events before it applied twice change nothing.
    #[test]
    fn events_applied_twice_are_harmless() {
        let q = "198.19.66.0/24";
        let a = via(q, 10, &["198.19.0.2"]);
        let mut f = KernelFib::from_table(KernelTable {
            nexthops: Vec::new(),
            routes: vec![a.clone()],
        });
        assert!(f
            .apply(RouteEvent::Add(a.clone(), AddHow::Create))
            .is_empty());
        assert_eq!(f.len(), 1);
        let b = via(q, 10, &["198.19.0.3"]);
        f.apply(RouteEvent::Add(b.clone(), AddHow::Replace));
        f.apply(RouteEvent::Add(b.clone(), AddHow::Replace));
        assert_eq!(f.len(), 1);
        f.apply(RouteEvent::Del(b.clone()));
        f.apply(RouteEvent::Del(b));
        assert!(f.is_empty());
        let other = KernelFib::from_table(KernelTable {
            nexthops: Vec::new(),
            routes: vec![a.clone()],
        });
        assert_eq!(f.diff(&other), [(p(q), fwd(&["198.19.0.2"]))]);
    }
}
