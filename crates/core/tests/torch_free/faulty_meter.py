import json, sys, time
mode, after = sys.argv[1], int(sys.argv[2])
n = 0
for line in iter(sys.stdin.readline, ''):
    command = line.strip()
    if command == 'quit':
        break
    if command != 'read':
        continue
    n += 1
    if n > after:
        if mode == 'die':
            sys.stderr.write('meter: lost the serial port\n')
            sys.stderr.flush()
            sys.exit(3)
        if mode == 'stall':
            time.sleep(60)
        if mode == 'garbage':
            print('E42 overrange', flush=True)
            continue
    reply = {'joules': float(n), 'timestamp': time.monotonic(), 'update_period_s': 0.0001}
    print(json.dumps(reply), flush=True)
