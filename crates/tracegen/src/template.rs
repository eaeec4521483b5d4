//! A step rendered once into JSON text with holes: the numbers that change from step to
//! step (timestamps, ids, the step's number) are patched in as the step is written, which
//! is all the per-step work there is. The text is laid out as Kineto writes it: one event
//! per block, `ts` and `dur` in microseconds with three decimals.

use crate::event::{Counter, Event, Name, Phase, Process, Step, Value, COUNTERS};

/// A number patched in at write time.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A timestamp: nanoseconds after the step's start.
    Time(u64),
    /// The step's base of the counter plus this offset.
    Id(Counter, u64),
    /// The step's number.
    StepNumber,
}

/// What makes one step's numbers: where its time and each counter start.
#[derive(Clone, Copy, Debug)]
pub struct Bases {
    /// The step's start, nanoseconds on the trace's clock.
    pub time_ns: u64,
    pub ids: [u64; COUNTERS],
    pub step: u64,
}

/// Events rendered as text with holes.
#[derive(Clone, Debug, Default)]
pub struct Part {
    text: Vec<u8>,
    /// (end of the literal text before the slot, the slot).
    parts: Vec<(usize, Slot)>,
}

/// One variant of the step, ready to be written any number of times.
#[derive(Clone, Debug)]
pub struct Template {
    /// The step's events together.
    pub steps: Part,
    /// The step's share of each of Kineto's three sections.
    pub sections: [Part; 3],
    /// Nanoseconds from this step's start to the next's.
    pub length: u64,
    /// How much of each counter a step takes.
    pub counters: [u64; COUNTERS],
}

/// Writes `ns` as microseconds with three decimals (`1419247333430.849`).
pub fn write_micros(out: &mut Vec<u8>, ns: u64) {
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(digits.format(ns / 1000).as_bytes());
    let frac = ns % 1000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// `text` as a JSON string literal's contents.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

struct Renderer {
    text: Vec<u8>,
    parts: Vec<(usize, Slot)>,
}

impl Renderer {
    fn lit(&mut self, s: &str) {
        self.text.extend_from_slice(s.as_bytes());
    }

    fn slot(&mut self, slot: Slot) {
        self.parts.push((self.text.len(), slot));
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Id(counter, offset) => self.slot(Slot::Id(*counter, *offset)),
            Value::Raw(text) => self.lit(text),
        }
    }

    fn name(&mut self, name: &Name) {
        match name {
            Name::Text(text) => self.lit(&escape(text)),
            Name::Step => {
                self.lit("ProfilerStep#");
                self.slot(Slot::StepNumber);
            }
        }
    }

    fn event(&mut self, event: &Event, host_pid: u64) {
        let pid = match event.process {
            Process::Host => host_pid,
            Process::Gpu => 0,
        };
        match &event.phase {
            Phase::Complete { dur } => {
                self.lit("  {\n    \"ph\": \"X\", \"cat\": \"");
                self.lit(event.cat);
                self.lit("\", \"name\": \"");
                self.name(&event.name);
                self.lit(&format!(
                    "\", \"pid\": {pid}, \"tid\": {},\n    \"ts\": ",
                    event.tid
                ));
                self.slot(Slot::Time(event.ts));
                self.lit(", \"dur\": ");
                let mut micros = Vec::new();
                write_micros(&mut micros, *dur);
                self.text.extend_from_slice(&micros);
                if !event.args.is_empty() {
                    self.lit(",\n    \"args\": {\n      ");
                    for (i, (key, value)) in event.args.iter().enumerate() {
                        if i > 0 {
                            self.lit(", ");
                        }
                        self.lit(&format!("\"{key}\": "));
                        self.value(value);
                    }
                    self.lit("\n    }");
                }
                self.lit("\n  },\n");
            }
            Phase::FlowStart { correlation } | Phase::FlowEnd { correlation } => {
                let (ph, tail) = match event.phase {
                    Phase::FlowStart { .. } => ("s", ""),
                    _ => ("f", ", \"bp\": \"e\""),
                };
                self.lit(&format!("  {{\n    \"ph\": \"{ph}\", \"id\": "));
                self.slot(Slot::Id(Counter::Correlation, *correlation));
                self.lit(&format!(
                    ", \"pid\": {pid}, \"tid\": {}, \"ts\": ",
                    event.tid
                ));
                self.slot(Slot::Time(event.ts));
                self.lit(&format!(",\n    \"cat\": \"{}\", \"name\": \"", event.cat));
                self.name(&event.name);
                self.lit(&format!("\"{tail}\n  }},\n"));
            }
        }
    }
}

fn render(events: &[Event], host_pid: u64) -> Part {
    let mut r = Renderer {
        text: Vec::new(),
        parts: Vec::new(),
    };
    for event in events {
        r.event(event, host_pid);
    }
    Part {
        text: r.text,
        parts: r.parts,
    }
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

impl Part {
    /// Appends the events with these numbers to `out`.
    pub fn write(&self, out: &mut Vec<u8>, bases: &Bases) {
        let mut digits = itoa::Buffer::new();
        let mut from = 0;
        for &(end, slot) in &self.parts {
            out.extend_from_slice(&self.text[from..end]);
            from = end;
            match slot {
                Slot::Time(rel) => write_micros(out, bases.time_ns + rel),
                Slot::Id(counter, offset) => out.extend_from_slice(
                    digits
                        .format(bases.ids[counter.index()] + offset)
                        .as_bytes(),
                ),
                Slot::StepNumber => out.extend_from_slice(digits.format(bases.step).as_bytes()),
            }
        }
        out.extend_from_slice(&self.text[from..]);
    }

    /// How many bytes [`Part::write`] would append.
    pub fn len_with(&self, bases: &Bases) -> usize {
        self.text.len()
            + self
                .parts
                .iter()
                .map(|&(_, slot)| match slot {
                    Slot::Time(rel) => digits((bases.time_ns + rel) / 1000) + 4,
                    Slot::Id(counter, offset) => digits(bases.ids[counter.index()] + offset),
                    Slot::StepNumber => digits(bases.step),
                })
                .sum::<usize>()
    }
}

impl Template {
    /// The step's events rendered for the process `host_pid`.
    pub fn render(step: &Step, host_pid: u64) -> Template {
        Template {
            steps: render(&step.events, host_pid),
            sections: [
                render(&step.sections[0], host_pid),
                render(&step.sections[1], host_pid),
                render(&step.sections[2], host_pid),
            ],
            length: step.length,
            counters: step.counters,
        }
    }

    /// About how many bytes one step writes.
    pub fn approximate_len(&self) -> usize {
        self.steps.text.len() + self.steps.parts.len() * 12
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_three_decimals_and_names_are_escaped() {
        let mut out = Vec::new();
        write_micros(&mut out, 1_419_247_333_430_849);
        assert_eq!(out, b"1419247333430.849");
        out.clear();
        write_micros(&mut out, 5_007);
        assert_eq!(out, b"5.007");
        assert_eq!(escape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
    }
}
