-- A school year may keep no bus positions: the run's last position only (docs/domain.md "Bus runs").
ALTER TABLE `school_configuration` ADD `keep_bus_positions` integer DEFAULT true NOT NULL;
