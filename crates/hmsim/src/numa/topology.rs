//! Machine topology in TOML: sockets, memory controllers (one sub-NUMA-cluster node each),
//! DRAM per controller, far-memory modules (PMem DIMMs, CXL expanders) one NUMA node each,
//! SLIT distances, and per-path latency/bandwidth from the device catalog.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{Source, Validate, Validator};
use crate::device::Catalog;
use crate::error::ConfigError;

/// The built-in topology presets, by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("aliusm-2s", include_str!("../../topologies/aliusm-2s.toml")),
    ("cxl-box", include_str!("../../topologies/cxl-box.toml")),
];

crate::params! {
    #[params(required, check)]
    /// A machine: sockets, memory controllers with their DRAM and far-memory modules, the
    /// media they use, the socket interconnect and the SLIT distances.
    #[derive(Debug, Clone)]
    pub struct Topology {
        pub name: String => any, "", "Topology name.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub description: Option<String> = None => any, "", "One line for tables and docs.";
        pub page_bytes: u64 = 4096 => range(4096, 1 << 30), "",
            "Page size; a power of two.";
        pub kernel_reserved_bytes: u64 = 0 => any, "",
            "Bytes the kernel holds on every CPU node (DRAM in flat mode, PMem in Memory Mode).";
        pub sockets: Vec<Socket> => table, "", "The sockets, at least one.";
        pub controllers: Vec<Controller> => table, "",
            "Memory controllers (one sub-NUMA-cluster node each), at least one with DRAM per socket.";
        pub media: BTreeMap<String, Medium> => any, "",
            "Media by name (`dram`, `pmem`, `cxl`, ...), referenced by controllers and modules; each a [Medium](#medium).";
        pub interconnect: Interconnect = Interconnect::default() => nested, "",
            "The socket-to-socket link.";
        pub distances: Vec<Vec<u32>> => any, "",
            "SLIT matrix over the nodes: DRAM nodes first (controllers in order), then modules; 10 on the diagonal, 11 to 254 elsewhere.";
    }
}

crate::params! {
    #[params(required)]
    /// One socket.
    #[derive(Debug, Clone)]
    pub struct Socket {
        pub cores: u32 => any, "cores", "Cores of the socket, 1 to 4096.";
    }
}

crate::params! {
    #[params(required)]
    /// One memory controller: its DRAM (a node with the socket's CPUs) and its far-memory
    /// modules.
    #[derive(Debug, Clone)]
    pub struct Controller {
        pub socket: usize => any, "", "Index of its socket.";
        pub dram_bytes: u64 = 0 => any, "", "DRAM on this controller; 0: none, else at least a page.";
        pub dram_medium: String = "dram".into() => any, "", "Medium of the DRAM, a key of `media`.";
        pub modules: Vec<Module> = Vec::new() => table, "",
            "Far-memory modules on this controller, each its own CPU-less node.";
    }
}

crate::params! {
    #[params(required)]
    /// One far-memory module (a PMem DIMM, a CXL expander): one CPU-less NUMA node.
    #[derive(Debug, Clone)]
    pub struct Module {
        pub medium: String => any, "", "Its medium, a key of `media`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub bytes: Option<u64> = None => any, "",
            "Usable capacity, the same in App Direct (KMEM_DAX) and Memory Mode; default the medium's catalog device's `usable_capacity_bytes` (else its `capacity_bytes`); at least a page.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub raw_bytes: Option<u64> = None => any, "",
            "Raw capacity, reported only; default `bytes` when `bytes` is given, else the catalog device's `capacity_bytes`; at least `bytes`.";
    }
}

crate::params! {
    #[params(required)]
    /// One medium: a catalog device with optional overrides. `units` devices of it make one
    /// node (DRAM: channels per controller; a PMem module: 1 DIMM).
    #[derive(Debug, Clone)]
    pub struct Medium {
        pub device: String => any, "", "Catalog memory device.";
        pub units: u32 = 1 => any, "devices", "Devices making one node, 1 to 64.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_latency_ns: Option<f64> = None => any, "",
            "Override of the device's read latency; above zero.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub random_read_latency_ns: Option<f64> = None => any, "",
            "Random-read idle latency; default the device's (sequential) read latency.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_bandwidth_gb_s: Option<f64> = None => any, "",
            "Override of the node's read bandwidth; above zero.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub write_bandwidth_gb_s: Option<f64> = None => any, "",
            "Override of the node's write bandwidth; above zero.";
        pub mix_penalty: f64 = crate::mempath::MIX_PENALTY => any, "",
            "Loss of saturation bandwidth at a 50/50 mix on top of the read/write asymmetry (tier engine's `mix_penalty`), 0 to 0.9.";
        pub cacheable: bool = true => any, "",
            "Far memory only: whether Memory Mode may use controller DRAM as its cache.";
    }
}

crate::params! {
    /// The socket interconnect.
    #[derive(Debug, Clone)]
    pub struct Interconnect {
        pub remote_extra_latency_ns: f64 = 65.0 => non_negative, "",
            "Latency a cross-socket access adds to the medium's (Vuppalapati & Agarwal, ACM SOSP 2024, setup: remote socket 135 ns vs local 70 ns unloaded).";
        pub bandwidth_gb_s: f64 = 75.0 => positive, "",
            "Per-direction socket-to-socket bandwidth; caps every remote path (Vuppalapati & Agarwal, ACM SOSP 2024, setup: UPI ≈ 75 GB/s).";
    }
}

/// Device figures the numa model does not use (it takes name, read and write latency and
/// bandwidth, capacity and usable capacity): a warning when a user's device file sets them.
pub(crate) const NUMA_UNUSED: &[(&str, &str)] = &[
    (
        "access_bytes",
        "the device's bandwidths are taken as stated, whatever its access size",
    ),
    (
        "read.energy_nj_per_access",
        "the numa model reports no energy",
    ),
    (
        "write.energy_nj_per_access",
        "the numa model reports no energy",
    ),
    ("power", "the numa model reports no power or energy"),
    ("endurance", "the numa model counts no wear"),
    ("thermal", "the numa model has no temperature"),
];

/// What a node is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Controller DRAM with CPUs.
    Dram,
    /// A CPU-less far-memory module.
    Far,
}

/// Resolved medium figures for one node (all units of it together).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Media {
    pub read_latency_ns: f64,
    pub random_read_latency_ns: f64,
    pub write_latency_ns: f64,
    pub read_bandwidth_gb_s: f64,
    pub write_bandwidth_gb_s: f64,
    pub mix_penalty: f64,
    pub cacheable: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: usize,
    pub kind: NodeKind,
    pub socket: usize,
    pub controller: usize,
    pub medium: String,
    pub capacity_bytes: u64,
    pub raw_bytes: u64,
    pub media: Media,
}

/// A validated topology with its nodes numbered the Linux way.
#[derive(Debug, Clone)]
pub struct NumaMachine {
    pub spec: Topology,
    pub nodes: Vec<Node>,
}

impl Topology {
    /// Structure across tables: sockets, controllers, media references, distances.
    fn check(&self, v: &mut Validator) {
        if !self.page_bytes.is_power_of_two() {
            v.fail(
                "page_bytes",
                format!("{} is not a power of two", self.page_bytes),
            );
        }
        if self.sockets.is_empty() {
            v.fail("sockets", "empty; list at least one [[sockets]]");
        }
        for (i, s) in self.sockets.iter().enumerate() {
            v.range(&format!("sockets.{i}.cores"), s.cores, 1, 4096, "cores");
        }
        if self.controllers.is_empty() {
            v.fail("controllers", "empty; list at least one [[controllers]]");
        }
        for (i, c) in self.controllers.iter().enumerate() {
            let k = format!("controllers.{i}");
            if c.socket >= self.sockets.len() {
                v.fail(
                    &format!("{k}.socket"),
                    format!(
                        "{} is out of range; allowed 0 to {}",
                        c.socket,
                        self.sockets.len().saturating_sub(1)
                    ),
                );
            }
            if c.dram_bytes == 0 && c.modules.is_empty() {
                v.fail(
                    &k,
                    "this controller has no memory: give dram_bytes > 0 or at least one module",
                );
            }
            if c.dram_bytes > 0 && !self.media.contains_key(&c.dram_medium) {
                v.fail(
                    &format!("{k}.dram_medium"),
                    self.unknown_medium(&c.dram_medium),
                );
            }
            if c.dram_bytes > 0 && c.dram_bytes < self.page_bytes {
                v.fail(&format!("{k}.dram_bytes"), "smaller than one page");
            }
            for (j, m) in c.modules.iter().enumerate() {
                let mk = format!("{k}.modules.{j}");
                if !self.media.contains_key(&m.medium) {
                    v.fail(&format!("{mk}.medium"), self.unknown_medium(&m.medium));
                }
                if let Some(b) = m.bytes.filter(|&b| b < self.page_bytes) {
                    v.fail(
                        &format!("{mk}.bytes"),
                        format!("{b} is less than one page ({} bytes)", self.page_bytes),
                    );
                }
                if m.raw_bytes.zip(m.bytes).is_some_and(|(r, b)| r < b) {
                    v.fail(&format!("{mk}.raw_bytes"), "smaller than the usable bytes");
                }
            }
        }
        for (s, _) in self.sockets.iter().enumerate() {
            if !self
                .controllers
                .iter()
                .any(|c| c.socket == s && c.dram_bytes > 0)
            {
                v.fail(
                    "sockets",
                    format!("socket {s} has no controller with DRAM (its cores need a local node)"),
                );
            }
        }
        for (name, m) in &self.media {
            let k = format!("media.{name}");
            v.range(&format!("{k}.units"), m.units, 1, 64, "devices");
            v.range(&format!("{k}.mix_penalty"), m.mix_penalty, 0.0, 0.9, "");
            for (f, x) in [
                ("read_latency_ns", m.read_latency_ns),
                ("random_read_latency_ns", m.random_read_latency_ns),
                ("read_bandwidth_gb_s", m.read_bandwidth_gb_s),
                ("write_bandwidth_gb_s", m.write_bandwidth_gb_s),
            ] {
                if let Some(x) = x {
                    v.positive(&format!("{k}.{f}"), x, f.rsplit('_').next().unwrap_or(""));
                }
            }
        }
        let n = self.node_count();
        let (d, f) = (self.dram_nodes(), n - self.dram_nodes());
        if self.distances.len() != n {
            v.fail(
                "distances",
                format!(
                    "has {} rows; expected {n} (one per node: {d} DRAM + {f} module nodes)",
                    self.distances.len()
                ),
            );
        }
        for (i, row) in self.distances.iter().enumerate() {
            if row.len() != n {
                v.fail(
                    &format!("distances.{i}"),
                    format!("has {} entries; expected {n}", row.len()),
                );
            }
            for (j, &x) in row.iter().enumerate() {
                if i == j && x != 10 {
                    v.fail(
                        &format!("distances.{i}.{j}"),
                        format!("{x}: a node's distance to itself must be 10"),
                    );
                }
                if i != j && !(11..=254).contains(&x) {
                    v.fail(
                        &format!("distances.{i}.{j}"),
                        format!("{x} is out of range; allowed 11 to 254 between different nodes"),
                    );
                }
            }
        }
    }
}

impl Topology {
    fn unknown_medium(&self, name: &str) -> String {
        let known: Vec<&str> = self.media.keys().map(String::as_str).collect();
        format!(
            "unknown medium '{name}'; defined under [media]: {}",
            known.join(", ")
        )
    }

    fn dram_nodes(&self) -> usize {
        self.controllers.iter().filter(|c| c.dram_bytes > 0).count()
    }

    pub fn node_count(&self) -> usize {
        self.dram_nodes()
            + self
                .controllers
                .iter()
                .map(|c| c.modules.len())
                .sum::<usize>()
    }
}

impl NumaMachine {
    /// Validate `spec` (read from `source`, with keys under `prefix`) and resolve its media
    /// against the catalog.
    pub fn build(
        spec: Topology,
        source: &Source,
        prefix: &str,
        catalog: &Catalog,
    ) -> Result<NumaMachine, ConfigError> {
        let file = source.file();
        let mut v = Validator::new(source);
        if prefix.is_empty() {
            spec.validate(&mut v);
        } else {
            v.nested(prefix, &spec);
        }
        v.finish()?;
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        let mut media = BTreeMap::new();
        for (name, m) in &spec.media {
            let dk = key(&format!("media.{name}.device"));
            let d = catalog.require(&m.device, file, &dk)?;
            if d.kind != crate::device::DeviceKind::Memory {
                return Err(ConfigError::new(
                    file,
                    &dk,
                    format!(
                        "'{}' is a block device; a medium needs a memory device",
                        d.name
                    ),
                )
                .at_line(source.line_of_key(&dk)));
            }
            if d.link.is_some() {
                let at = catalog
                    .origin_text(&d.name, "link")
                    .map(|o| format!(" (set at {o})"))
                    .unwrap_or_default();
                return Err(ConfigError::new(
                    file,
                    &dk,
                    format!(
                        "the numa model cannot use device '{}' as it is: it has a [link]{at}, and a \
                         node's path here is its media plus the socket interconnect; give the \
                         medium's read_bandwidth_gb_s / write_bandwidth_gb_s as the link allows, \
                         or use the device as a tier of the tiering module, which takes [link] as \
                         the tier's path",
                        d.name
                    ),
                )
                .at_line(source.line_of_key(&dk)));
            }
            let u = m.units as f64;
            let read = m.read_latency_ns.unwrap_or(d.read.latency_ns);
            media.insert(
                name.clone(),
                Media {
                    read_latency_ns: read,
                    random_read_latency_ns: m.random_read_latency_ns.unwrap_or(read),
                    write_latency_ns: d.write.latency_ns,
                    read_bandwidth_gb_s: m.read_bandwidth_gb_s.unwrap_or(d.read.bandwidth_gb_s) * u,
                    write_bandwidth_gb_s: m.write_bandwidth_gb_s.unwrap_or(d.write.bandwidth_gb_s)
                        * u,
                    mix_penalty: m.mix_penalty,
                    cacheable: m.cacheable,
                },
            );
        }
        let mut nodes = Vec::new();
        for (c, ctl) in spec.controllers.iter().enumerate() {
            if ctl.dram_bytes > 0 {
                nodes.push(Node {
                    id: nodes.len(),
                    kind: NodeKind::Dram,
                    socket: ctl.socket,
                    controller: c,
                    medium: ctl.dram_medium.clone(),
                    capacity_bytes: ctl.dram_bytes,
                    raw_bytes: ctl.dram_bytes,
                    media: media[&ctl.dram_medium],
                });
            }
        }
        for (c, ctl) in spec.controllers.iter().enumerate() {
            for (j, m) in ctl.modules.iter().enumerate() {
                let (bytes, raw_bytes) = match m.bytes {
                    Some(b) => (b, m.raw_bytes.unwrap_or(b)),
                    None => {
                        // The module's capacity from the catalog: usable (after the
                        // module's own metadata) and raw.
                        let mk = key(&format!("controllers.{c}.modules.{j}"));
                        let d = catalog.require(&spec.media[&m.medium].device, file, &mk)?;
                        let b = d.usable_capacity_bytes.unwrap_or(d.capacity_bytes);
                        let mut v = Validator::new(source);
                        if b < spec.page_bytes {
                            v.fail(
                                &format!("{mk}.bytes"),
                                format!(
                                    "the catalog's {b} bytes of '{}' are less than one page",
                                    d.name
                                ),
                            );
                        }
                        let raw = m.raw_bytes.unwrap_or(d.capacity_bytes.max(b));
                        if raw < b {
                            v.fail(&format!("{mk}.raw_bytes"), "smaller than the usable bytes");
                        }
                        v.finish()?;
                        (b, raw)
                    }
                };
                nodes.push(Node {
                    id: nodes.len(),
                    kind: NodeKind::Far,
                    socket: ctl.socket,
                    controller: c,
                    medium: m.medium.clone(),
                    capacity_bytes: bytes,
                    raw_bytes,
                    media: media[&m.medium],
                });
            }
        }
        Ok(NumaMachine { spec, nodes })
    }

    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.spec.distances[a][b]
    }

    pub fn total_cores(&self) -> u32 {
        self.spec.sockets.iter().map(|s| s.cores).sum()
    }

    /// Socket and home DRAM node of `core` (cores numbered socket by socket; a socket's
    /// cores split evenly over its DRAM controllers, as SNC does).
    pub fn home_of_core(&self, core: u32) -> (usize, usize) {
        let mut c = core % self.total_cores();
        let mut socket = 0;
        for (s, sk) in self.spec.sockets.iter().enumerate() {
            if c < sk.cores {
                socket = s;
                break;
            }
            c -= sk.cores;
        }
        let local: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Dram && n.socket == socket)
            .collect();
        let per = self.spec.sockets[socket].cores.div_ceil(local.len() as u32);
        (socket, local[(c / per) as usize].id)
    }

    pub fn dram_bytes(&self) -> u64 {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Dram)
            .map(|n| n.capacity_bytes)
            .sum()
    }

    pub fn far_bytes(&self) -> u64 {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Far)
            .map(|n| n.capacity_bytes)
            .sum()
    }

    /// Unloaded latency (ns) and read/write bandwidth (GB/s) of the path from `socket` to
    /// `node`: the node's media, plus the interconnect when the node is on another socket.
    pub fn path(&self, socket: usize, node: usize) -> Path {
        let n = &self.nodes[node];
        let remote = n.socket != socket;
        let ic = &self.spec.interconnect;
        let extra = if remote {
            ic.remote_extra_latency_ns
        } else {
            0.0
        };
        let cap = if remote {
            ic.bandwidth_gb_s
        } else {
            f64::INFINITY
        };
        Path {
            remote,
            read_latency_ns: n.media.read_latency_ns + extra,
            random_read_latency_ns: n.media.random_read_latency_ns + extra,
            write_latency_ns: n.media.write_latency_ns + extra,
            read_bandwidth_gb_s: n.media.read_bandwidth_gb_s.min(cap),
            write_bandwidth_gb_s: n.media.write_bandwidth_gb_s.min(cap),
        }
    }
}

/// Idle latency and bandwidth of one socket-to-node path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Path {
    pub remote: bool,
    pub read_latency_ns: f64,
    pub random_read_latency_ns: f64,
    pub write_latency_ns: f64,
    pub read_bandwidth_gb_s: f64,
    pub write_bandwidth_gb_s: f64,
}

impl Path {
    /// Saturation bandwidth of traffic with `read_fraction` of its bytes read: the
    /// harmonic mix of the read and write bandwidths.
    pub fn mixed_bandwidth_gb_s(&self, read_fraction: f64) -> f64 {
        1.0 / (read_fraction / self.read_bandwidth_gb_s
            + (1.0 - read_fraction) / self.write_bandwidth_gb_s)
    }
}

/// The topology a scenario (read into `source`) names: a preset name, a TOML file path
/// (relative to the scenario), or an inline table.
pub(crate) fn load(
    inline: Option<&Topology>,
    preset: Option<&str>,
    source: &Source,
    catalog: &Catalog,
) -> Result<NumaMachine, ConfigError> {
    let file = source.file();
    match (inline, preset) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            file,
            "topology_preset",
            "give either topology_preset or [topology], not both",
        )
        .at_line(source.line_of_key("topology_preset"))),
        (Some(t), None) => NumaMachine::build(t.clone(), source, "topology", catalog),
        (None, p) => {
            let p = p.unwrap_or("aliusm-2s");
            let (tfile, ttext) = match PRESETS.iter().find(|(n, _)| *n == p) {
                Some((n, t)) => (format!("<preset {n}>"), t.to_string()),
                None => {
                    let base = std::path::Path::new(file)
                        .parent()
                        .unwrap_or(std::path::Path::new(""));
                    let path = base.join(p);
                    let t = crate::config::read_config_text(&path).map_err(|e| {
                        let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                        ConfigError::new(
                            file,
                            "topology_preset",
                            format!(
                                "'{p}' is neither a preset ({}) nor a readable file: {e}",
                                names.join(", ")
                            ),
                        )
                        .at_line(source.line_of_key("topology_preset"))
                    })?;
                    (path.display().to_string(), t)
                }
            };
            let topology = Source::parse(&ttext, &tfile)?;
            NumaMachine::build(topology.deserialize()?, &topology, "", catalog)
        }
    }
}
