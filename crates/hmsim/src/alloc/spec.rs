//! Allocators by name: what a scenario's `[[allocators]]` entry says and how it is built.

use super::buddy::Buddy;
use super::ibuddy::IBuddy;
use super::lazy::{Lazy, LazyMode};
use super::lists::FreeListPolicy;
use super::{PageAllocator, MAX_CPUS};
use crate::config::Validator;
use crate::named::{Entry, Registry};

/// Builds an allocator from its `AllocatorSpec` over a number of frames (validated beforehand).
pub(crate) type MakeAllocator = fn(&AllocatorSpec, u64) -> Box<dyn PageAllocator>;

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

crate::params! {
    #[params(required, check)]
    /// One allocator configuration.
    #[derive(Debug, Clone, PartialEq)]
    pub struct AllocatorSpec {
        pub name: String => any, "",
            "The allocator: `buddy`, `lazy-buddy`, `ibuddy` or `lazy-ibuddy` (docs/allocators.md).";
        pub batch: u32 = 31 => range(1, 4096), "pages",
            "Lazy layers: pages moved per refill/drain (`lazy-buddy`, Linux 2.6 default 31; newer kernels 63) or the per-CPU list capacity (`lazy-ibuddy`, bypass policy).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub high: Option<u32> = None => range(1, 65_536), "pages",
            "`lazy-buddy`: drain `batch` pages when a per-CPU list reaches this many (2.6.32's `pcp->count >= pcp->high`), at least `batch`; default 6 × batch (Linux 2.6's rule: 31 → 186).";
        pub policy: FreeListPolicy = FreeListPolicy::Lifo => any, "",
            "Reuse policy of every free list of this allocator: `lifo`, `fifo` or `least-allocated`.";
        pub spaces: u32 = 4 => range(1, 1024), "",
            "iBuddy: number of buddy spaces, each with its own lock; frames must be a multiple of 64 × spaces.";
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub migratetypes: bool = false => any, "",
            "`buddy`, `lazy-buddy`: free lists per migratetype (unmovable, movable, reclaimable) with Linux's fallback stealing; requests take the trace's migratetype.";
    }
}

impl AllocatorSpec {
    pub fn named(name: &str) -> AllocatorSpec {
        // The keys' declared defaults: the same as a table that gives only `name`.
        let table = toml::Value::Table(toml::map::Map::from_iter([(
            "name".to_string(),
            toml::Value::String(name.to_string()),
        )]));
        table.try_into().expect("AllocatorSpec defaults")
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

    /// Checks across fields (ranges of single keys are declared above).
    fn check(&self, v: &mut Validator) {
        v.one_of("name", &self.name, &ALLOCATOR_KINDS.names());
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
        }
        if self.migratetypes && !self.name.ends_with("-buddy") && self.name != "buddy" {
            v.fail(
                "migratetypes",
                format!(
                    "only buddy and lazy-buddy have migratetypes, not {}",
                    self.name
                ),
            );
        }
    }

    /// The check that depends on the frame array.
    pub fn check_frames(&self, v: &mut Validator, frames: u64) {
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
