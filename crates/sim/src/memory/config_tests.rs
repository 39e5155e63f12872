//! Tests of the memory-system configuration: every field validated, presets, errors naming the field.

use super::*;

fn field_of(err: MemoryError) -> &'static str {
    match err {
        MemoryError::InvalidConfig { field, .. } => field,
        other => panic!("expected a field error, got {other}"),
    }
}

#[test]
fn presets_validate() {
    MemoryConfig::tango().validate(12).unwrap();
    MemoryConfig::bbn_gp1000(16).validate(16).unwrap();
    MemoryConfig::none().validate(1024).unwrap();
    assert_eq!(MemoryConfig::default(), MemoryConfig::tango());
    let t = MemoryConfig::tango();
    assert_eq!((t.lines(), t.ways(), t.sets()), (4096, 4096, 1));
    let dm = MemoryConfig {
        associativity: 1,
        ..t
    };
    assert_eq!((dm.ways(), dm.sets()), (1, 4096));
}

/// One bad value per case: the field it must be reported under, and the change from Tango.
type Case = (&'static str, fn(&mut MemoryConfig));

#[test]
fn bad_sizes_name_their_field() {
    let cases: Vec<Case> = vec![
        ("cache_bytes", |c| c.cache_bytes = 0),
        ("cache_bytes", |c| c.cache_bytes = 8),
        ("cache_bytes", |c| c.cache_bytes = 1000),
        ("cache_bytes", |c| c.cache_bytes = 2 << 30),
        ("line_bytes", |c| c.line_bytes = 0),
        ("line_bytes", |c| c.line_bytes = 24),
        ("line_bytes", |c| c.line_bytes = 2),
        ("line_bytes", |c| c.line_bytes = 8192),
        ("associativity", |c| c.associativity = 3),
        ("associativity", |c| c.associativity = 8192),
        ("hit_cycles", |c| c.hit_cycles = 0),
        ("miss_cycles", |c| c.miss_cycles = 0),
        ("miss_cycles", |c| c.miss_cycles = u64::MAX),
        ("atomic_cycles", |c| c.atomic_cycles = 1 << 40),
        ("numa.nodes", |c| {
            c.numa = Some(NumaConfig {
                nodes: 0,
                ..NumaConfig::default()
            })
        }),
        ("numa.remote_cycles", |c| {
            c.numa = Some(NumaConfig {
                nodes: 2,
                local_cycles: 10,
                remote_cycles: 5,
                ..NumaConfig::default()
            })
        }),
        ("numa.local_cycles", |c| {
            c.numa = Some(NumaConfig {
                local_cycles: 0,
                ..NumaConfig::default()
            })
        }),
        ("bus.transfer_cycles", |c| {
            c.bus = Some(BusConfig {
                transfer_cycles: 0,
                locked_atomics: false,
            })
        }),
    ];
    for (field, spoil) in cases {
        let mut cfg = MemoryConfig::tango();
        spoil(&mut cfg);
        let err = cfg.validate(4).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(&format!("memory.{field}:")), "{text}");
        assert_eq!(field_of(err), field);
    }
}

#[test]
fn processor_count_is_checked() {
    let cfg = MemoryConfig::tango();
    assert!(matches!(
        cfg.validate(0),
        Err(MemoryError::InvalidProcessors { count: 0, .. })
    ));
    assert!(cfg.validate(MAX_PROCESSORS + 1).is_err());
    cfg.validate(MAX_PROCESSORS).unwrap();
}

#[test]
fn disabled_model_ignores_geometry() {
    let cfg = MemoryConfig {
        cache_bytes: 0,
        line_bytes: 3,
        ..MemoryConfig::none()
    };
    cfg.validate(2).unwrap();
}

#[test]
fn toml_overrides_one_field_and_rejects_unknown_ones() {
    let cfg: MemoryConfig = toml::from_str("associativity = 1\n").unwrap();
    assert_eq!(
        cfg,
        MemoryConfig {
            associativity: 1,
            ..MemoryConfig::tango()
        }
    );
    let cfg: MemoryConfig =
        toml::from_str("[numa]\nnodes = 8\nmapping = \"round_robin\"\n[bus]\n").unwrap();
    let numa = cfg.numa.unwrap();
    assert_eq!((numa.nodes, numa.remote_cycles), (8, 20));
    assert_eq!(numa.mapping, NodeMapping::RoundRobin);
    assert_eq!(cfg.bus, Some(BusConfig::default()));
    let err = toml::from_str::<MemoryConfig>("cache_byte = 4\n").unwrap_err();
    assert!(err.to_string().contains("cache_byte"), "{err}");
    let err = toml::from_str::<MemoryConfig>("[numa]\nnode = 4\n").unwrap_err();
    assert!(err.to_string().contains("node"), "{err}");
}

#[test]
fn serializes_round_trip() {
    let cfg = MemoryConfig::bbn_gp1000(4);
    let text = toml::to_string(&cfg).unwrap();
    let back: MemoryConfig = toml::from_str(&text).unwrap();
    assert_eq!(back, cfg);
}
