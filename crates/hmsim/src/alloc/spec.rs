//! Allocators by name: what a scenario's `[[allocators]]` entry says and how it is built.

use serde::{Deserialize, Serialize};

use super::buddy::Buddy;
use super::ibuddy::IBuddy;
use super::lazy::{Lazy, LazyMode};
use super::lists::FreeListPolicy;
use super::{PageAllocator, MAX_CPUS};
use crate::config::Validator;
use crate::scenario::{Entry, Registry};

/// Builds an allocator from its `AllocatorSpec` over a number of frames (validated beforehand).
pub type MakeAllocator = fn(&AllocatorSpec, u64) -> Box<dyn PageAllocator>;

/// The allocators a scenario's `[[allocators]]` entry can name.
pub static ALLOCATOR_KINDS: Registry<MakeAllocator> = Registry::new(
    "allocator",
    &[
        Entry {
            name: "buddy",
            about: "Linux's binary buddy allocator: split on allocation, coalesce on free",
            make: |s, frames| Box::new(buddy(s, frames)),
        },
        Entry {
            name: "lazy-buddy",
            about: "the buddy behind per-CPU lists refilled and drained in batches",
            make: |s, frames| {
                let mode = LazyMode::Bulky {
                    batch: s.batch,
                    high: s.high(),
                };
                Box::new(Lazy::new(buddy(s, frames), mode, MAX_CPUS, s.policy))
            },
        },
        Entry {
            name: "ibuddy",
            about: "iBuddy: per-order free lists without splitting or coalescing, in locked spaces",
            make: |s, frames| Box::new(IBuddy::new(frames, s.spaces as usize, s.policy)),
        },
        Entry {
            name: "lazy-ibuddy",
            about: "iBuddy behind per-CPU lists that bypass to the spaces when full or empty",
            make: |s, frames| {
                let inner = IBuddy::new(frames, s.spaces as usize, s.policy);
                let mode = LazyMode::Bypass { capacity: s.batch };
                Box::new(Lazy::new(inner, mode, MAX_CPUS, s.policy))
            },
        },
    ],
);

fn buddy(spec: &AllocatorSpec, frames: u64) -> Buddy {
    if spec.migratetypes {
        Buddy::with_migratetypes(frames, spec.policy, 0)
    } else {
        Buddy::new(frames, spec.policy, 0)
    }
}

/// One allocator configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocatorSpec {
    /// One of [`ALLOCATOR_KINDS`].
    pub name: String,
    /// Lazy layers: pages moved per refill/drain (`lazy-buddy`, Linux 2.6 default 31;
    /// newer kernels 63) or the per-CPU list capacity (`lazy-ibuddy`, bypass policy).
    #[serde(default = "default_batch")]
    pub batch: u32,
    /// `lazy-buddy`: drain when a per-CPU list grows above this; default 6 × batch
    /// (Linux 2.6's rule: 31 → 186).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<u32>,
    /// Reuse policy of every free list of this allocator.
    #[serde(default)]
    pub policy: FreeListPolicy,
    /// iBuddy: number of buddy spaces, each with its own lock.
    #[serde(default = "default_spaces")]
    pub spaces: u32,
    /// `buddy`, `lazy-buddy`: free lists per migratetype (unmovable, movable,
    /// reclaimable) with Linux's fallback stealing; requests take the trace's migratetype.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub migratetypes: bool,
}

fn default_batch() -> u32 {
    31
}

fn default_spaces() -> u32 {
    4
}

impl AllocatorSpec {
    pub fn named(name: &str) -> AllocatorSpec {
        AllocatorSpec {
            name: name.to_string(),
            batch: default_batch(),
            high: None,
            policy: FreeListPolicy::Lifo,
            spaces: default_spaces(),
            migratetypes: false,
        }
    }

    pub fn high(&self) -> u32 {
        self.high.unwrap_or(6 * self.batch)
    }

    fn lazy(&self) -> bool {
        self.name.starts_with("lazy-")
    }

    /// Batch as reported: 0 for allocators without a lazy layer.
    pub fn batch_column(&self) -> u32 {
        if self.lazy() {
            self.batch
        } else {
            0
        }
    }

    /// A label such as `lazy-buddy(batch=31,high=186)/fifo`.
    pub fn label(&self) -> String {
        let mut s = self.name.clone();
        let mut args = Vec::new();
        if self.name == "lazy-buddy" {
            args.push(format!("batch={}", self.batch));
            args.push(format!("high={}", self.high()));
        } else if self.name == "lazy-ibuddy" {
            args.push(format!("batch={}", self.batch));
        }
        if self.name.ends_with("ibuddy") {
            args.push(format!("spaces={}", self.spaces));
        }
        if !args.is_empty() {
            s = format!("{s}({})", args.join(","));
        }
        if self.migratetypes {
            s = format!("{s}+migratetypes");
        }
        if self.policy != FreeListPolicy::Lifo {
            s = format!("{s}/{}", self.policy.name());
        }
        s
    }

    /// Range checks that depend on the frame array.
    pub fn validate_for(&self, v: &mut Validator, frames: u64) {
        v.one_of("name", &self.name, &ALLOCATOR_KINDS.names());
        v.range("batch", self.batch, 1, 4096, "pages");
        if let Some(h) = self.high {
            if h < self.batch {
                v.fail(
                    "high",
                    format!(
                        "{h} is below batch ({}); allowed batch to 65536 pages",
                        self.batch
                    ),
                );
            }
            v.range("high", h, 1, 65_536, "pages");
        }
        v.range("spaces", self.spaces, 1, 1024, "");
        if self.migratetypes && !self.name.ends_with("-buddy") && self.name != "buddy" {
            v.fail(
                "migratetypes",
                format!(
                    "only buddy and lazy-buddy have migratetypes, not {}",
                    self.name
                ),
            );
        }
        if self.name.ends_with("ibuddy") && !frames.is_multiple_of(64 * self.spaces as u64) {
            v.fail(
                "spaces",
                format!(
                    "iBuddy needs frames ({frames}) to be a multiple of 64 × spaces ({})",
                    64 * self.spaces as u64
                ),
            );
        }
    }
}

/// Build the allocator `spec` over `frames` frames; an unknown name lists the allowed ones.
pub fn build(spec: &AllocatorSpec, frames: u64) -> Result<Box<dyn PageAllocator>, String> {
    match ALLOCATOR_KINDS.get(&spec.name) {
        Some(make) => Ok(make(spec, frames)),
        None => Err(format!(
            "unknown allocator '{}'; allowed: {}",
            spec.name,
            ALLOCATOR_KINDS.names().join(", ")
        )),
    }
}
