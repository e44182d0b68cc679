"""The floor: the service that stores every table's journal records exactly
once (docs/floor.md), its store, the site's broker configuration and the
simulated tables that tests and benches feed it with."""
