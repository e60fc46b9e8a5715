cd /tmp/rt12
P=/work/zoo_venv/bin/python
$P gen/fuzz.py f32 0 600 2>/dev/null
$P gen/fuzz.py f16 0 200 2>/dev/null
$P gen/fuzz.py bf16 0 150 2>/dev/null
$P gen/fuzz.py i32 0 80 2>/dev/null
$P gen/fuzz.py i64 0 80 2>/dev/null
$P gen/fuzz.py f64 0 80 2>/dev/null
echo DONE
