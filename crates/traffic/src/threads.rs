//! Starting the engine and talking to its threads: [`NetTrial::new`] opens
//! the plan's ports and starts the receiver and generator threads (or the
//! `xdp` backend's worker); a trial sends them commands; `Drop` stops and
//! joins them.
//!
//! Why threads that live as long as the [`NetTrial`]: opening AF_XDP
//! queues and buffer pools is slow and pools are per thread by design in
//! `netio`, so each thread opens its queues once, in the ports' network
//! namespaces ([`enter_netns`]), and the caller's thread never changes
//! namespace.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use netio::Pool;

use super::flows::plan_flows;
use super::gen::{self, GenJob, GenResult};
use super::noise::NoiseMeter;
use super::ports::{self, enter_netns, GenTx, PortHandle};
use super::rx::{self, RxCmd, RxPort, RxShared};
use super::{clock, cpu, neigh, xdp, NetTrial, TrafficOptions};
use bench::plan::{DutProbe, TrafficPlan};

/// A job for the generator thread, and where to send it back with the
/// result.
pub(super) enum GenCmd {
    Run(Box<GenJob>, Sender<(Box<GenJob>, GenResult)>),
}

impl NetTrial {
    /// Open the plan's ports (in their namespaces) and start the receiver
    /// and generator threads. Learning happens before the first trial.
    pub fn new(
        plan: TrafficPlan,
        probe: Option<Box<dyn DutProbe>>,
        opts: TrafficOptions,
    ) -> Result<NetTrial> {
        let (flows, send_ports) = plan_flows(&plan)?;

        let noise = NoiseMeter::new(&plan);
        if plan.backend.counts_in_xdp() {
            let x = xdp::XdpNet::new(&plan, flows.len(), noise.arm_handle())?;
            let mut describe = vec![
                "XDP live frames (BPF_PROG_TEST_RUN, paced in the program), XDP counting"
                    .to_string(),
            ];
            describe.extend(x.placement.iter().cloned());
            return Ok(NetTrial {
                plan,
                opts,
                probe,
                ports: Vec::new(),
                flows,
                // Plan port indices (the worker has no TX list).
                send_ports,
                rx_cmd: None,
                gen_cmd: None,
                threads: Vec::new(),
                shared: Arc::new(RxShared::default()),
                learned: None,
                tx_describe: describe,
                xdp: Some(x),
                noise,
            });
        }
        let shared = Arc::new(RxShared::default());
        // Receiver: opens every port and its RX queues (+ an answer path).
        let (rx_cmd, rx_cmds) = channel::<RxCmd>();
        let (ready_tx, ready_rx) = channel::<Result<Vec<PortHandle>>>();
        let plan2 = plan.clone();
        let shared2 = shared.clone();
        let rx_thread = std::thread::Builder::new()
            .name("sr-bench-rx".into())
            .spawn(move || rx_thread(plan2, rx_cmds, shared2, ready_tx))
            .context("spawning the receiver thread")?;
        let ports = match ready_rx.recv() {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                drop(rx_cmd);
                let _ = rx_thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = rx_thread.join();
                bail!("the receiver thread died while opening the tester ports");
            }
        };
        // Generator: its own TX path on every sending port.
        let (gen_cmd, gen_cmds) = channel::<GenCmd>();
        let (gready_tx, gready_rx) = channel::<Result<Vec<String>>>();
        let senders: Vec<(usize, PortHandle, Option<String>)> = send_ports
            .iter()
            .map(|&(p, _)| (p, ports[p].clone(), plan.ports[p].netns.clone()))
            .collect();
        let gen_thread = std::thread::Builder::new()
            .name("sr-bench-gen".into())
            .spawn(move || gen_thread(senders, gen_cmds, gready_tx))
            .context("spawning the generator thread")?;
        let mut me = NetTrial {
            plan,
            opts,
            probe,
            ports,
            flows,
            // The generator's TX list is in send_ports order.
            send_ports: send_ports
                .into_iter()
                .enumerate()
                .map(|(i, (_, v))| (i, v))
                .collect(),
            rx_cmd: Some(rx_cmd),
            gen_cmd: Some(gen_cmd),
            threads: vec![rx_thread, gen_thread],
            shared,
            learned: None,
            tx_describe: Vec::new(),
            xdp: None,
            noise,
        };
        match gready_rx.recv() {
            Ok(Ok(d)) => me.tx_describe = d,
            Ok(Err(e)) => return Err(e),
            Err(_) => bail!("the generator thread died while opening its TX paths"),
        }
        Ok(me)
    }

    pub(super) fn run_gen(&mut self, job: GenJob) -> Result<(GenJob, GenResult)> {
        let (tx, rx) = channel();
        // The job travels to the generator and back with the result, so
        // its templates can be reused (learning rounds, timeline).
        let job = Box::new(job);
        self.gen_cmd
            .as_ref()
            .ok_or_else(|| anyhow!("generator stopped"))?
            .send(GenCmd::Run(job, tx))
            .map_err(|_| anyhow!("the generator thread is gone"))?;
        let (job, res) = recv_gen(&rx)?;
        Ok((job, res))
    }

    pub(super) fn rx_send(&self, c: RxCmd) -> Result<()> {
        self.rx_cmd
            .as_ref()
            .ok_or_else(|| anyhow!("receiver stopped"))?
            .send(c)
            .map_err(|_| anyhow!("the receiver thread is gone"))
    }
}

fn recv_gen(rx: &Receiver<(Box<GenJob>, GenResult)>) -> Result<(GenJob, GenResult)> {
    let (j, r) = rx
        .recv()
        .map_err(|_| anyhow!("the generator thread died during a trial"))?;
    Ok((*j, r))
}

impl Drop for NetTrial {
    fn drop(&mut self) {
        self.gen_cmd.take();
        self.rx_cmd.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn rx_thread(
    plan: TrafficPlan,
    cmds: Receiver<RxCmd>,
    shared: Arc<RxShared>,
    ready: Sender<Result<Vec<PortHandle>>>,
) {
    clock::small_timer_slack();
    cpu::pin_tester_thread();
    let setup = || -> Result<(Vec<PortHandle>, Vec<RxPort>, Pool)> {
        let nq: usize = plan.ports.len() * usize::from(plan.queues.max(1));
        let frames = (8192usize).max(2048 * nq * 2 + 4096) as u32;
        let mut pool = Pool::new(frames, ports::FRAME_SIZE).context("receiver buffer pool")?;
        let mut handles = Vec::new();
        let mut rxp = Vec::new();
        for p in &plan.ports {
            enter_netns(p.netns.as_deref())?;
            let h = PortHandle::open(p, plan.backend, plan.queues)?;
            let mut queues = Vec::new();
            for q in 0..h.rx_queues() {
                queues.push(
                    h.port()
                        .open_rx(q, &mut pool)
                        .with_context(|| format!("RX queue {q} of {}", p.iface))?,
                );
            }
            let tx = h
                .port()
                .open_tx(0, &mut pool)
                .with_context(|| format!("answer TX path of {}", p.iface))?;
            rxp.push(RxPort {
                queues,
                tx,
                me: neigh::NeighIdentity {
                    mac: p.mac,
                    v4: p.v4,
                    v6: p.v6,
                },
            });
            handles.push(h);
        }
        Ok((handles, rxp, pool))
    };
    match setup() {
        Ok((handles, rxp, pool)) => {
            let keep = handles.clone();
            let _ = ready.send(Ok(handles));
            rx::run(rxp, pool, cmds, shared);
            drop(keep);
        }
        Err(e) => {
            let _ = ready.send(Err(e));
        }
    }
}

fn gen_thread(
    senders: Vec<(usize, PortHandle, Option<String>)>,
    cmds: Receiver<GenCmd>,
    ready: Sender<Result<Vec<String>>>,
) {
    clock::small_timer_slack();
    cpu::pin_tester_thread();
    let setup = || -> Result<(Vec<GenTx>, Pool)> {
        let frames = (4096 + 2048 * senders.len()) as u32;
        let mut pool = Pool::new(frames, ports::FRAME_SIZE).context("generator buffer pool")?;
        let mut txs = Vec::new();
        for (_, h, ns) in &senders {
            enter_netns(ns.as_deref())?;
            txs.push(h.open_gen_tx(&mut pool)?);
        }
        Ok((txs, pool))
    };
    let (mut txs, mut pool) = match setup() {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(txs.iter().map(|t| t.describe.clone()).collect()));
    while let Ok(GenCmd::Run(job, reply)) = cmds.recv() {
        let r = gen::run(&job, &mut txs, &mut pool);
        let _ = reply.send((job, r));
    }
    for t in txs.iter_mut() {
        t.q.release(&mut pool);
    }
    drop(txs);
    drop(pool);
}
