"""Round-11 red-team harness: round 10's (../round10/lib10.py: save a case with onnxruntime's
outputs, run fusor on ref/cpu/vulkan through the CLI, compare), with its folder under $RT11.
usage: lib11.py DIR... : check each case folder; prints TSV lines."""
import os, sys
os.environ.setdefault('RT10', os.environ.get('RT11', '/tmp/rt11'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'round10'))
from lib10 import *  # noqa: F401,F403  (the generators use its save / run / compare helpers)

if __name__ == '__main__':
    import concurrent.futures as cf
    with cf.ThreadPoolExecutor(2) as ex:
        for ls in ex.map(check, sys.argv[1:]):
            for l in ls: print(l, flush=True)
