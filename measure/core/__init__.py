"""The pure core of a measurement: energies, schedule design, attribution, statistics, reports, records."""
