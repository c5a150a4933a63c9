"""The papers and data sheets hmsim's published numbers come from, cited once.

Studies name a source by key (`Published(..., source="yang-fast20")`); the report and
docs/validation.md print the short form beside each number and the full entry in their
reference list. docs/references.md lists the same entries for the docs pages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    key: str
    authors: str  # as "Last, Last and Last" or "Last et al." when the list is long
    title: str
    venue: str
    year: int | None
    # Said plainly when part of the citation is not known to the project.
    note: str = ""
    volume: str = ""  # e.g. "64(3)", printed in the full entry only
    hint: str = ""  # tells two short forms apart when venue and year are unknown

    def short(self) -> str:
        """'Yang et al., FAST 2020': enough to find the entry in the reference list."""
        etal = self.authors.endswith(" et al.")
        names = [n for part in self.authors.removesuffix(" et al.").split(", ") for n in part.split(" and ")]
        last = [n.split()[-1] for n in names]
        who = f"{last[0]} et al." if etal or len(last) > 2 else " & ".join(last)
        where = " ".join(x for x in (self.venue, str(self.year or "")) if x) or self.hint
        return f"{who}, {where}" if where else who

    def full(self) -> str:
        venue = " ".join(x for x in (self.venue, self.volume) if x)
        tail = ", ".join(x for x in (venue, str(self.year or "")) if x)
        note = f" ({self.note})" if self.note else ""
        authors = self.authors if self.authors.endswith(".") else f"{self.authors}."
        return f"{authors} *{self.title}*." + (f" {tail}." if tail else "") + note


_ALL = [
    Reference(
        "park-stt-mram",
        "Park, Ma, Oh and Kim",
        "Comparative Analysis of Performance, Power and Heat of STT-MRAM-Based Storage Devices",
        "",
        None,
        "Sogang University and ETRI; venue and year not known to the project",
        hint="STT-MRAM storage study",
    ),
    Reference(
        "yang-fast20",
        "Jian Yang, Juno Kim, Morteza Hoseinzadeh, Joseph Izraelevitz and Steven Swanson",
        "An Empirical Guide to the Behavior and Use of Scalable Persistent Memory",
        "USENIX FAST",
        2020,
    ),
    Reference(
        "wang-micro20",
        "Zixuan Wang, Xiao Liu, Jian Yang, Theodore Michailidis, Steven Swanson and Jishen Zhao",
        "Characterizing and Modeling Non-Volatile Memory Systems (LENS and VANS)",
        "IEEE/ACM MICRO",
        2020,
    ),
    Reference(
        "tonic-access21",
        "Woo, Kim, Jung and Seo",
        "Analysis and Optimization of Persistent Memory Index Structures' Write Amplification",
        "IEEE Access",
        2021,
        volume="vol. 9",
    ),
    Reference(
        "recipe-sosp19",
        "Se Kwon Lee, Jayashree Mohan, Sanidhya Kashyap, Taesoo Kim and Vijay Chidambaram",
        "RECIPE: Converting Concurrent DRAM Indexes to Persistent-Memory Indexes",
        "ACM SOSP",
        2019,
    ),
    Reference(
        "aliusm-kcc21",
        "ETRI and oslab",
        "aliusM: extending system memory with persistent memory in NUMA",
        "KCC",
        2021,
        "author list not known to the project; a Linux 5.4 patch",
    ),
    Reference(
        "intel-cascade-lake",
        "Intel",
        "Intel Xeon Platinum 8280 processor, product specification (UPI links and speed)",
        "ark.intel.com",
        2019,
    ),
    Reference(
        "colloid-sosp24",
        "Midhul Vuppalapati and Rachit Agarwal",
        "Tiered Memory Management: Access Latency is the Key!",
        "ACM SOSP",
        2024,
    ),
    Reference(
        "hemem-sosp21",
        "Amanda Raybuck, Tim Stamler, Wei Zhang, Mattan Erez and Simon Peter",
        "HeMem: Scalable Tiered Memory Management for Big Data Applications and Real NVM",
        "ACM SOSP",
        2021,
    ),
    Reference(
        "tpp-asplos23",
        "Hasan Al Maruf, Hao Wang, Abhishek Dhanotia, Johannes Weiner, Niket Agarwal, Pallab Bhattacharya, "
        "Chris Petersen, Mosharaf Chowdhury, Shobhit Kanaujia and Prakash Chauhan",
        "TPP: Transparent Page Placement for CXL-Enabled Tiered-Memory",
        "ACM ASPLOS",
        2023,
    ),
    Reference(
        "memtis-sosp23",
        "Taehyung Lee, Sumit Kumar Monga, Changwoo Min and Young Ik Eom",
        "MEMTIS: Efficient Memory Tiering with Dynamic Page Classification and Page Size Determination",
        "ACM SOSP",
        2023,
    ),
    Reference(
        "mess-micro24",
        "Pouya Esmaili-Dokht et al.",
        "A Mess of Memory System Benchmarking, Simulation and Application Profiling",
        "IEEE/ACM MICRO",
        2024,
    ),
    Reference(
        "ibuddy-tc15",
        "Heekwon Park, Jongmoo Choi, Donghee Lee and Sam H. Noh",
        "iBuddy: Inverse Buddy for Enhancing Memory Allocation/Deallocation Performance on Multi-Core Systems",
        "IEEE Transactions on Computers",
        2015,
        volume="64(3)",
    ),
    Reference(
        "choi-nvramos11",
        "Jongmoo Choi",
        "Operating System Supports for SCM as Main Memory Systems (Focusing on iBuddy)",
        "NVRAMOS",
        2011,
    ),
    Reference(
        "startgap-micro09",
        "Moinuddin K. Qureshi, John Karidis, Michele Franceschini, Vijayalakshmi Srinivasan, Luis Lastras "
        "and Bulent Abali",
        "Enhancing Lifetime and Security of PCM-Based Main Memory with Start-Gap Wear Leveling",
        "IEEE/ACM MICRO",
        2009,
    ),
    Reference(
        "qureshi-isca09",
        "Moinuddin K. Qureshi, Vijayalakshmi Srinivasan and Jude A. Rivers",
        "Scalable High Performance Main Memory System Using Phase-Change Memory Technology",
        "ACM/IEEE ISCA",
        2009,
    ),
    Reference(
        "han-shin-umd",
        "Kyuhwa Han and Dongkun Shin",
        "Memory Management Techniques for DRAM Interface-based SSD",
        "KIISE",
        None,
        "year not known to the project",
    ),
]

REFERENCES: dict[str, Reference] = {r.key: r for r in _ALL}


def get(key: str) -> Reference:
    """The entry for `key`; a study naming an unknown source is a programming error."""
    try:
        return REFERENCES[key]
    except KeyError:
        raise KeyError(f"unknown reference {key!r}; known: {', '.join(sorted(REFERENCES))}") from None


def cite(key: str, where: str = "") -> str:
    """'Yang et al., FAST 2020, idle latency': the short form plus where in the paper."""
    if not key:
        return ""
    short = get(key).short()
    return f"{short}, {where}" if where else short
