//! The measures of a point, as one typed table ([`MEASURES`]): each entry's name, unit, meaning,
//! how it is computed from the simulator's report, and its columns in `results.csv` and in the
//! terminal's table. Claims, plots and `metric` read measures by name ([`value`], [`check`]);
//! the CSV header, the terminal's columns, the guide's measure table and `smpsched list` are
//! generated from the table ([`views`]).

mod table;
mod value;
pub mod views;

use smpsched_sim::metrics::Recorded;
use smpsched_sim::{AppReport, MachineConfig, RunReport};

use crate::plan::point::Point;
use crate::plan::record::RunRecord;

pub use table::MEASURES;
pub use value::{check, is_known, is_metric, runs_of, value, SD_PREFIX};

/// The Raspberry Pi 3's core timer, in MHz (Weibel, section 2): runtimes are counted in its
/// ticks.
pub const TIMER_MHZ: f64 = 19.2;

/// What follows a measure's name when a claim writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// Nothing: a measure of the whole machine (`utilization`).
    None,
    /// An application's name (`app_util:MP3D`).
    App,
    /// An application's name and a recorded name (`recorded_mean:clients:delay`).
    AppName,
    /// Another measure (`sd:utilization`).
    Measure,
}

impl Args {
    /// How the guide and error messages write the arguments (`:APP`).
    pub fn suffix(self) -> &'static str {
        match self {
            Args::None => "",
            Args::App => ":APP",
            Args::AppName => ":APP:NAME",
            Args::Measure => ":MEASURE",
        }
    }
}

/// The unit a measure or a column is expressed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Simulated processor cycles.
    Cycles,
    /// Milliseconds at the machine's clock rate.
    Milliseconds,
    /// Microseconds at the machine's clock rate.
    Microseconds,
    /// Percent (0 to 100).
    Percent,
    /// A fraction (0 to 1).
    Fraction,
    /// A count of events.
    Count,
    /// Events per time slice per processor.
    Rate,
    /// Millions of cycles or references.
    Millions,
    /// Ticks of Weibel's 19.2 MHz core timer.
    Ticks,
    /// Text.
    Text,
    /// The unit of the values the programs recorded.
    Recorded,
    /// The unit of the measure it applies to.
    Same,
}

impl Unit {
    /// The unit as `smpsched list` and the guide write it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Cycles => "cycles",
            Unit::Milliseconds => "ms",
            Unit::Microseconds => "µs",
            Unit::Percent => "%",
            Unit::Fraction => "fraction",
            Unit::Count => "count",
            Unit::Rate => "/slice/cpu",
            Unit::Millions => "millions",
            Unit::Ticks => "ticks",
            Unit::Text => "text",
            Unit::Recorded => "as recorded",
            Unit::Same => "as MEASURE",
        }
    }
}

/// How a measure is computed from one run's report (the mean over a point's runs is taken
/// by [`value`]).
#[derive(Clone, Copy)]
pub enum Compute {
    /// From the machine's report; `None` where not defined.
    Machine(fn(&Point, &RunReport) -> Option<f64>),
    /// From the named application's report.
    App(fn(&MachineConfig, &AppReport) -> Option<f64>),
    /// From what the named application's programs recorded under the named name.
    Recorded(fn(&Recorded) -> Option<f64>),
    /// The sample standard deviation of another measure over the point's runs.
    Deviation,
    /// Not a measure: a column of `results.csv` only.
    Column,
}

/// How the terminal's table prints the mean of a column over a point's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A fraction as a percentage with one decimal.
    Pct1,
    /// Millions with three decimals.
    Mega3,
    /// The value with two decimals.
    Fixed2,
}

/// A column of `results.csv`: its header, its place among the measure columns, its unit, and
/// its cell on the machine row (`None`) and on an application's row.
#[derive(Clone, Copy)]
pub struct CsvColumn {
    /// The header.
    pub header: &'static str,
    /// Its place among the measure columns (after `app`), from 0.
    pub slot: u8,
    /// The unit of its cells.
    pub unit: Unit,
    /// The cell of a run's machine row (`None`) or of an application's row.
    pub cell: fn(&RunRecord, Option<&AppReport>) -> String,
}

/// A column of the terminal's table (the machine table for machine measures, the application
/// table for application measures): header, place, format and the value of one run.
#[derive(Clone, Copy)]
pub struct TermColumn {
    /// The header.
    pub header: &'static str,
    /// Its place among the table's value columns, from 0.
    pub slot: u8,
    /// How the mean prints.
    pub format: Format,
    /// The value of one run (the application's, in the application table).
    pub read: fn(&RunReport, Option<&AppReport>) -> f64,
}

/// One entry of the measure table.
#[derive(Clone, Copy)]
pub struct Measure {
    /// The name claims write, before its arguments.
    pub name: &'static str,
    /// What follows the name.
    pub args: Args,
    /// The unit of its value.
    pub unit: Unit,
    /// What it means (the guide's and `smpsched list`'s text).
    pub doc: &'static str,
    /// How it is computed from a run.
    pub compute: Compute,
    /// Its column in `results.csv`, if any.
    pub csv: Option<CsvColumn>,
    /// Its column in the terminal's table, if any.
    pub terminal: Option<TermColumn>,
}

impl Measure {
    const fn new(
        name: &'static str,
        args: Args,
        unit: Unit,
        doc: &'static str,
        compute: Compute,
    ) -> Self {
        Measure {
            name,
            args,
            unit,
            doc,
            compute,
            csv: None,
            terminal: None,
        }
    }

    /// A measure of the whole machine.
    pub const fn machine(
        name: &'static str,
        unit: Unit,
        doc: &'static str,
        f: fn(&Point, &RunReport) -> Option<f64>,
    ) -> Self {
        Measure::new(name, Args::None, unit, doc, Compute::Machine(f))
    }

    /// A measure of one application, written `NAME:APP`.
    pub const fn app(
        name: &'static str,
        unit: Unit,
        doc: &'static str,
        f: fn(&MachineConfig, &AppReport) -> Option<f64>,
    ) -> Self {
        Measure::new(name, Args::App, unit, doc, Compute::App(f))
    }

    /// A measure of what an application's programs recorded, written `NAME:APP:RECORDED`.
    pub const fn recorded(
        name: &'static str,
        doc: &'static str,
        f: fn(&Recorded) -> Option<f64>,
    ) -> Self {
        Measure::new(
            name,
            Args::AppName,
            Unit::Recorded,
            doc,
            Compute::Recorded(f),
        )
    }

    /// The standard deviation of another measure, written `NAME:MEASURE`.
    pub const fn deviation(name: &'static str, doc: &'static str) -> Self {
        Measure::new(name, Args::Measure, Unit::Same, doc, Compute::Deviation)
    }

    /// A column of `results.csv` that is no measure.
    pub const fn column(name: &'static str, doc: &'static str) -> Self {
        Measure::new(name, Args::None, Unit::Text, doc, Compute::Column)
    }

    /// The same entry with a column in `results.csv`.
    pub const fn csv(
        mut self,
        header: &'static str,
        slot: u8,
        unit: Unit,
        cell: fn(&RunRecord, Option<&AppReport>) -> String,
    ) -> Self {
        self.csv = Some(CsvColumn {
            header,
            slot,
            unit,
            cell,
        });
        self
    }

    /// The same entry with a column in the terminal's table.
    pub const fn terminal(
        mut self,
        header: &'static str,
        slot: u8,
        format: Format,
        read: fn(&RunReport, Option<&AppReport>) -> f64,
    ) -> Self {
        self.terminal = Some(TermColumn {
            header,
            slot,
            format,
            read,
        });
        self
    }

    /// Whether claims can name it (every entry but the CSV-only columns).
    pub fn is_measure(&self) -> bool {
        !matches!(self.compute, Compute::Column)
    }

    /// The name as the guide and error messages write it (`app_util:APP`).
    pub fn written(&self) -> String {
        format!("{}{}", self.name, self.args.suffix())
    }
}

impl Format {
    /// The mean `x` as the terminal's table prints it.
    pub fn show(self, x: f64) -> String {
        if x.is_nan() {
            // No value (an application that did not finish has no completion time).
            return "-".into();
        }
        match self {
            Format::Pct1 => format!("{:.1}", 100.0 * x),
            Format::Mega3 => format!("{:.3}", x / 1e6),
            Format::Fixed2 => format!("{:.2}", x),
        }
    }
}
