"""Twenty submissions at once, each in its own (forked) process, against one fake GitHub."""

from tests.support.hostile import concurrency


def test_twenty_processes_at_once_make_twenty_prs_and_twenty_gallery_rows(tmp_path, base_gallery):
    out = concurrency.run(20, tmp_path, base_gallery, mode="fork")
    assert out["exit_codes"] == [0] * 20
    assert out["branches"] == 20 and out["pulls"] == 20
    assert out["records_per_issue"] == [1] and out["distinct_record_paths"] == 20 and out["mixed"] == []
    assert out["merged_records"] == 20
    assert out["gallery_rows"] == 20 and sum(out["gallery_counts"].values()) == 20
