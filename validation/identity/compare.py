# Compares two outputs of validation/identity/run.sh: every summary.json, CSV and described plan
# (describe/*.json: key order included) byte for byte, the
# sweeps' JSON files but for wall-clock fields, every Parquet file in schema and content (and says
# how many differ in bytes). Exit 1 if anything differs.
import sys, os, json, pyarrow.parquet as pq
# wall-clock fields, and haslab_version (the package version and a fingerprint of the simulator's
# source: it differs between two builds by construction)
VOLATILE = {"wall_s", "run_s", "finished_at", "haslab_version"}
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
a, b = sys.argv[1], sys.argv[2]
bad = n = pbytes = 0
for root, _, files in os.walk(a):
    for f in sorted(files):
        pa_ = os.path.join(root, f); pb = os.path.join(b, os.path.relpath(pa_, a))
        if f.endswith(('.png', '.lock', '.md', '.haslab-run')): continue
        if not os.path.exists(pb): print("missing", pb); bad += 1; continue
        n += 1
        da, db = open(pa_, 'rb').read(), open(pb, 'rb').read()
        if f.endswith('.parquet'):
            ta, tb = pq.read_table(pa_), pq.read_table(pb)
            keep = [c for c in ta.column_names if c not in VOLATILE]
            if not (ta.schema.equals(tb.schema, check_metadata=False)
                    and ta.select(keep).to_pandas().equals(tb.select(keep).to_pandas())):
                print("PARQUET DIFFERS", pa_); bad += 1
            elif da != db: pbytes += 1
        elif f == "summary.json" and "runs" not in root or f.endswith('.csv') or os.path.basename(root) == "describe":
            if da != db: print("DIFFERS", pa_); bad += 1
        elif f.endswith('.json'):
            if strip(json.loads(da)) != strip(json.loads(db)): print("DIFFERS", pa_); bad += 1
print(f"{n} files compared, {bad} differ, {pbytes} Parquet files equal in content but not in bytes")
sys.exit(1 if bad else 0)
