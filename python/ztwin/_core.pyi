"""Stubs of the compiled core (crates/ztwin-py). JSON text in, JSON text out."""

def run_variant(config_json: str) -> str:
    """Runs one resolved variant (JSON of the core's ``VariantConfig``); returns the result as JSON.

    Raises ``ztwin.exceptions.ScenarioError`` when the core rejects the configuration and
    ``ztwin.exceptions.SimulationError`` when the simulation fails.
    """

def geometry(request_json: str) -> str:
    """Block-pointer tree geometry: JSON request, JSON answer (raises ScenarioError on a bad request)."""

def version() -> str:
    """Version of the core crate."""

def sysbench_table_bytes(rows: int, page_size: int) -> int:
    """Size in bytes of one sysbench table's .ibd file as the core lays it out."""
