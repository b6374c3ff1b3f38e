#!/usr/bin/env python3
"""Check that guest/ imports only downward (guest/lib.h says how).

Layers, bottom up: 0 sys.c and ktap.c (lib.h); 1 hogs, huge, vfio_dev,
pmem, placement and thp (a .c and its .h each); 2 the suites (suites.h),
one file each; 3 init.c.  A file may include the headers of the layers
below its own, its own header and its layer's (lib.h, suites.h); a suite
may call no other suite's entry point (the run_* functions suites.h
declares); and a function a header declares is defined in that header's
layer.
Prints each violation; exits 1 if there is one.

usage: guest_layers.py GUEST_DIR
"""

import os
import re
import sys

HEADER_LAYER = {'lib.h': 0, 'hogs.h': 1, 'huge.h': 1, 'vfio_dev.h': 1,
		'placement.h': 1, 'pmem.h': 1, 'thp.h': 1,
		'suites.h': 2}
FILE_LAYER = {'sys.c': 0, 'ktap.c': 0, 'init.c': 3}
# The header the files of a layer share.
SHARED = {0: 'lib.h', 2: 'suites.h'}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
# A prototype in a header, a definition in a .c file (not static).
DECLARED = re.compile(r'^[a-z][\w \*]*?\b(\w+)\([^;{]*?\);', re.M | re.S)
DEFINED = re.compile(r'^(?!static)[a-z][\w \*]*?\b(\w+)\([^;]*?\)\n\{', re.M)
ENTRY = re.compile(r'\b(run_\w+)\(')


def layer(name):
	"""A file's layer: its own header's, or a suite's (2)."""
	if name in FILE_LAYER:
		return FILE_LAYER[name]
	return HEADER_LAYER.get(name[:-2] + '.h', 2)


def main():
	if len(sys.argv) != 2:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	top = sys.argv[1]
	bad = []
	try:
		with open(os.path.join(top, 'suites.h'), encoding='utf-8') as f:
			entries = set(ENTRY.findall(f.read()))
	except OSError as e:
		entries = set()
		bad.append(f'suites.h: {e.strerror}: no suite entry points')
	for name in sorted(os.listdir(top)):
		if not name.endswith(('.c', '.h')):
			continue
		with open(os.path.join(top, name), encoding='utf-8') as f:
			text = f.read()
		mine = layer(name)
		for inc in INCLUDE.findall(text):
			if inc not in HEADER_LAYER:
				bad.append(f'{name}: includes {inc}, which no layer has')
			elif HEADER_LAYER[inc] >= mine and inc != name[:-2] + '.h' and \
					inc != SHARED.get(mine):
				bad.append(f'{name} (layer {mine}) includes {inc} '
					   f'(layer {HEADER_LAYER[inc]})')
		if mine == 2 and name.endswith('.c'):
			defined = set(re.findall(r'^void (run_\w+)\(', text, re.M))
			for call in set(ENTRY.findall(text)) & entries - defined:
				bad.append(f'{name}: a suite calls another suite, {call}()')
	# A function a header declares is defined in that header's layer:
	# no suite's function reaches the layers below through a header.
	texts = {}
	for name in os.listdir(top):
		if name.endswith(('.c', '.h')):
			with open(os.path.join(top, name), encoding='utf-8') as f:
				texts[name] = f.read()
	where = {fn: name for name, text in texts.items() if name.endswith('.c')
		 for fn in DEFINED.findall(text)}
	for header, text in texts.items():
		if header not in HEADER_LAYER or header == 'suites.h':
			continue
		for fn in DECLARED.findall(text):
			if fn in where and layer(where[fn]) != HEADER_LAYER[header]:
				bad.append(f'{header} declares {fn}(), defined in '
					   f'{where[fn]} (layer {layer(where[fn])})')
	for line in bad:
		print('guest_layers.py: ' + line)
	print(f'guest_layers.py: {len(bad)} violations in {top}')
	return 1 if bad else 0


if __name__ == '__main__':
	sys.exit(main())
