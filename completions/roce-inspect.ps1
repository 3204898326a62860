
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roce-inspect' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roce-inspect'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'roce-inspect' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Decode a pcap or pcapng capture file (`-` reads standard input)')
            [CompletionResult]::new('capture', 'capture', [CompletionResultType]::ParameterValue, 'Capture live from a network interface and decode RoCE packets as they arrive')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest''s ib_write_bw')
            [CompletionResult]::new('correlate', 'correlate', [CompletionResultType]::ParameterValue, 'Match one job''s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction')
            [CompletionResult]::new('nccl', 'nccl', [CompletionResultType]::ParameterValue, 'See one NCCL job through NCCL''s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE')
            [CompletionResult]::new('interfaces', 'interfaces', [CompletionResultType]::ParameterValue, 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE')
            [CompletionResult]::new('plot', 'plot', [CompletionResultType]::ParameterValue, 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL''s steps (SVG, or PNG when OUT ends in .png)')
            [CompletionResult]::new('top', 'top', [CompletionResultType]::ParameterValue, 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roce-inspect;read' {
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'The capture file, tcpdump style (`read -r trace.pcap`); same as FILE')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file instead of printing them, each with its analysis marks as the packet comment (Wireshark''s `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`')
            [CompletionResult]::new('--write', '--write', [CompletionResultType]::ParameterName, 'Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file instead of printing them, each with its analysis marks as the packet comment (Wireshark''s `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Threads that decode and format packets (default: the cores available), while the calling thread analyses them in order and writes the output, which is the same whatever the number; 1 reads on one thread. Several threads are used while a pcap/pcapng file is read from its memory mapping (not standard input, not with --mirror-time)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--qp', '--qp', [CompletionResultType]::ParameterName, 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow')
            [CompletionResult]::new('--opcode', '--opcode', [CompletionResultType]::ParameterName, 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet')
            [CompletionResult]::new('-Y', '-Y ', [CompletionResultType]::ParameterName, 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet')
            [CompletionResult]::new('--display-filter', '--display-filter', [CompletionResultType]::ParameterName, 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet')
            [CompletionResult]::new('-T', '-T ', [CompletionResultType]::ParameterName, 'Output format, as tshark''s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'A field printed by -T fields (repeatable, in order); --list-fields lists them')
            [CompletionResult]::new('-E', '-E ', [CompletionResultType]::ParameterName, 'A -T fields option as tshark''s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (terminal and NO_COLOR unset), always, never')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`')
            [CompletionResult]::new('--vxlan-port', '--vxlan-port', [CompletionResultType]::ParameterName, 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux''s old default')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`')
            [CompletionResult]::new('--max-flows', '--max-flows', [CompletionResultType]::ParameterName, 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed')
            [CompletionResult]::new('--findings', '--findings', [CompletionResultType]::ParameterName, 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)')
            [CompletionResult]::new('--list-fields', '--list-fields', [CompletionResultType]::ParameterName, 'List every field that -Y and -T fields -e read, with its type and description (like `tshark -G fields`), and exit')
            [CompletionResult]::new('--marks', '--marks', [CompletionResultType]::ParameterName, 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Also list frames that are not RoCE, one short line each')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted for tcpdump compatibility; addresses are never resolved to names')
            [CompletionResult]::new('--mirror-time', '--mirror-time', [CompletionResultType]::ParameterName, 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector''s capture time (frames without one keep the capture time)')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq ''.flows[] | {dest_qp, psn}''`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`')
            [CompletionResult]::new('--gaps', '--gaps', [CompletionResultType]::ParameterName, 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`')
            [CompletionResult]::new('--encap-session', '--encap-session', [CompletionResultType]::ParameterName, 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;capture' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'The interface, tcpdump style (`capture -i eth0`); same as IFACE')
            [CompletionResult]::new('--snaplen', '--snaplen', [CompletionResultType]::ParameterName, 'Bytes kept of each frame (1-262144); longer frames are cut and their ICRC is reported as not checkable')
            [CompletionResult]::new('--buffer-size', '--buffer-size', [CompletionResultType]::ParameterName, 'Kernel capture buffer size: bytes, or with a K, M or G suffix (powers of 1024)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C); with -Y, only the shown frames, as pcapng with their analysis marks as packet comments (complete once the capture stops)')
            [CompletionResult]::new('--write', '--write', [CompletionResultType]::ParameterName, 'Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C); with -Y, only the shown frames, as pcapng with their analysis marks as packet comments (complete once the capture stops)')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Stop after this many seconds (fractions allowed), e.g. `--duration 30`')
            [CompletionResult]::new('--parquet', '--parquet', [CompletionResultType]::ParameterName, 'Also write every RoCE frame and, at the end, the report as Parquet tables under DIR, as `export` does; the capture is named after the -w file, else IFACE-UNIXTIME')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'With --parquet: the `host` column (default: this machine''s host name)')
            [CompletionResult]::new('-Z', '-Z ', [CompletionResultType]::ParameterName, 'Once the device and the -w file are open, run as USER instead of root (tcpdump''s -Z): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w file and a new --parquet folder are given to USER')
            [CompletionResult]::new('--relinquish-privileges', '--relinquish-privileges', [CompletionResultType]::ParameterName, 'Once the device and the -w file are open, run as USER instead of root (tcpdump''s -Z): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w file and a new --parquet folder are given to USER')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`')
            [CompletionResult]::new('--qp', '--qp', [CompletionResultType]::ParameterName, 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow')
            [CompletionResult]::new('--opcode', '--opcode', [CompletionResultType]::ParameterName, 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet')
            [CompletionResult]::new('-Y', '-Y ', [CompletionResultType]::ParameterName, 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet')
            [CompletionResult]::new('--display-filter', '--display-filter', [CompletionResultType]::ParameterName, 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet')
            [CompletionResult]::new('-T', '-T ', [CompletionResultType]::ParameterName, 'Output format, as tshark''s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'A field printed by -T fields (repeatable, in order); --list-fields lists them')
            [CompletionResult]::new('-E', '-E ', [CompletionResultType]::ParameterName, 'A -T fields option as tshark''s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (terminal and NO_COLOR unset), always, never')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`')
            [CompletionResult]::new('--vxlan-port', '--vxlan-port', [CompletionResultType]::ParameterName, 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux''s old default')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`')
            [CompletionResult]::new('--max-flows', '--max-flows', [CompletionResultType]::ParameterName, 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed')
            [CompletionResult]::new('--findings', '--findings', [CompletionResultType]::ParameterName, 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)')
            [CompletionResult]::new('--promisc', '--promisc', [CompletionResultType]::ParameterName, 'Put the interface into promiscuous mode (off by default; a mirror port usually needs it)')
            [CompletionResult]::new('--buffered', '--buffered', [CompletionResultType]::ParameterName, 'Hand packets over in blocks (at most 100 ms late) instead of one by one: much higher packet rates without drops. The default when standard output is not a terminal or a pipe (e.g. `-w FILE > /dev/null`); this forces it for terminals and pipes too')
            [CompletionResult]::new('--marks', '--marks', [CompletionResultType]::ParameterName, 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print the full header tree of every packet, like `tshark -V`')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Also list frames that are not RoCE, one short line each')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted for tcpdump compatibility; addresses are never resolved to names')
            [CompletionResult]::new('--mirror-time', '--mirror-time', [CompletionResultType]::ParameterName, 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector''s capture time (frames without one keep the capture time)')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq ''.flows[] | {dest_qp, psn}''`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`')
            [CompletionResult]::new('--gaps', '--gaps', [CompletionResultType]::ParameterName, 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`')
            [CompletionResult]::new('--encap-session', '--encap-session', [CompletionResultType]::ParameterName, 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;generate' {
            [CompletionResult]::new('--peer', '--peer', [CompletionResultType]::ParameterName, 'Be the client and write to this server: an IPv4 address, an IPv6 address, or a GID')
            [CompletionResult]::new('--oob-port', '--oob-port', [CompletionResultType]::ParameterName, 'TCP port of the out-of-band exchange (QPN, PSN, GID, rkey, address, MTU)')
            [CompletionResult]::new('--device', '--device', [CompletionResultType]::ParameterName, 'RDMA device to use (default: the first device with an active Ethernet port)')
            [CompletionResult]::new('--ib-port', '--ib-port', [CompletionResultType]::ParameterName, 'Port number on the device (1-based, as in `ibv_devinfo`)')
            [CompletionResult]::new('--gid-index', '--gid-index', [CompletionResultType]::ParameterName, 'GID-table index to send from (default: the first RoCE v2 GID of the peer''s address family, preferring non-link-local ones)')
            [CompletionResult]::new('--gpu', '--gpu', [CompletionResultType]::ParameterName, 'Put the buffer in the memory of CUDA GPU N instead of host memory (needs the `gpu` build feature, an NVIDIA driver, and a NIC that can register GPU memory through dma-buf or nvidia-peermem)')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Bytes per RDMA WRITE (client), with an optional K, M or G suffix (powers of 1024)')
            [CompletionResult]::new('--iters', '--iters', [CompletionResultType]::ParameterName, 'WRITEs per QP (client); the default when --duration is not given is 5000, perftest''s')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Send for this many seconds instead of a number of WRITEs (client)')
            [CompletionResult]::new('--tx-depth', '--tx-depth', [CompletionResultType]::ParameterName, 'WRITEs outstanding per QP (client): the send-queue depth')
            [CompletionResult]::new('--qps', '--qps', [CompletionResultType]::ParameterName, 'Number of parallel RC QPs (client); each writes to its own slice of the server''s buffer')
            [CompletionResult]::new('--tclass', '--tclass', [CompletionResultType]::ParameterName, 'IP traffic class of our packets (the GRH traffic class: DSCP << 2 | ECN)')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Cap the path MTU (bytes: 256, 512, 1024, 2048 or 4096); otherwise the smaller of the two ports'' active MTUs')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Be the server: wait for a client on --oob-port and let it write into our buffer')
            [CompletionResult]::new('--imm', '--imm', [CompletionResultType]::ParameterName, 'Send RDMA WRITE WITH IMMEDIATE instead of RDMA WRITE (client); the server posts receives and counts the immediates')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the QP lines and the results as one JSON document instead of text and a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;correlate' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Seconds a packet copy waits for its copy at the link''s other end (fractions allowed); copies unmatched after it are lost or missed. Bounds memory')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (terminal and NO_COLOR unset), always, never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of tables')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Print every column of the tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width), as for `read --wide`')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;nccl' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable)')
            [CompletionResult]::new('--collective', '--collective', [CompletionResultType]::ParameterName, 'The collective that ran, for the algorithm bandwidth (busbw / nccl-tests'' factor); needs --ranks')
            [CompletionResult]::new('--ranks', '--ranks', [CompletionResultType]::ParameterName, 'Ranks of the job, for --collective')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Also write a self-contained HTML page (connections, a timeline of every step) to FILE')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of tables')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;export' {
            [CompletionResult]::new('--parquet', '--parquet', [CompletionResultType]::ParameterName, 'Dataset folder: the tables go to DIR/TABLE/capture=NAME/part-0.parquet (NAME: the file name), replacing an earlier export of a capture of the same name')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The `host` column: the machine or switch port the captures come from (default: each file''s name without its extension)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied before decoding, as for `read`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied before decoding, as for `read`')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable), as for `read`')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Path MTU in bytes for READ PSN reservation, as for `read` (256, 512, 1024, 2048, 4096)')
            [CompletionResult]::new('--max-flows', '--max-flows', [CompletionResultType]::ParameterName, 'Most flows tracked at once, as for `read`')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;list' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'roce-inspect;interfaces' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'roce-inspect;plot' {
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'What to draw: psn (PSN against time, tcptrace style), rate (throughput and congestion), latency (ACK RTT and READ latency CDFs), messages (message time lines), nccl (NCCL''s steps, one row per connection, as `nccl --html`)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output file: SVG, or PNG when it ends in `.png`')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output file: SVG, or PNG when it ends in `.png`')
            [CompletionResult]::new('--qp', '--qp', [CompletionResultType]::ParameterName, 'Only flows to this destination QP (decimal or 0x hex)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied while reading, as for `read -f`')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression applied while reading, as for `read -f`')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Start of the time span drawn, seconds since the first frame')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'End of the time span drawn, seconds since the first frame')
            [CompletionResult]::new('--bin', '--bin', [CompletionResultType]::ParameterName, 'Rate bin width in seconds (`--kind rate`), e.g. `--bin 0.0001`; default: about 1/60 of the span')
            [CompletionResult]::new('--top', '--top', [CompletionResultType]::ParameterName, 'Most flows drawn: the largest by payload bytes')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'Picture width in pixels')
            [CompletionResult]::new('--scale', '--scale', [CompletionResultType]::ParameterName, 'PNG pixels per picture pixel: `--scale 2` draws a PNG twice as large with the same layout, for high-DPI screens (SVGs are unaffected)')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Path MTU in bytes for READ PSN reservation, as for `read --mtu`')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;top' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'The interface, tcpdump style; same as IFACE')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Replay a capture file (pcap or pcapng) at its own pace instead of capturing')
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'With -r: replay N times faster than the capture was taken (e.g. 10, 0.5)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression instead of the default RoCE filter')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'libpcap BPF filter expression instead of the default RoCE filter')
            [CompletionResult]::new('-Y', '-Y ', [CompletionResultType]::ParameterName, 'Display filter at the start (as `/` sets it): the table counts only the packets it passes, e.g. `-Y ''bth.dest_qp == 0x11''`; the analysis still sees every packet')
            [CompletionResult]::new('--display-filter', '--display-filter', [CompletionResultType]::ParameterName, 'Display filter at the start (as `/` sets it): the table counts only the packets it passes, e.g. `-Y ''bth.dest_qp == 0x11''`; the analysis still sees every packet')
            [CompletionResult]::new('--snaplen', '--snaplen', [CompletionResultType]::ParameterName, 'Bytes kept of each frame (1-262144)')
            [CompletionResult]::new('--buffer-size', '--buffer-size', [CompletionResultType]::ParameterName, 'Kernel capture buffer size: bytes, or with a K, M or G suffix')
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Most bytes of the latest frames kept in memory for `w` (written as pcapng): bytes, or with a K, M or G suffix; 0 keeps none')
            [CompletionResult]::new('--save-dir', '--save-dir', [CompletionResultType]::ParameterName, 'Folder `w` writes its pcapng files into')
            [CompletionResult]::new('--roce-port', '--roce-port', [CompletionResultType]::ParameterName, 'Also decode UDP destination port N as RoCEv2 (repeatable)')
            [CompletionResult]::new('--vxlan-port', '--vxlan-port', [CompletionResultType]::ParameterName, 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable)')
            [CompletionResult]::new('--mtu', '--mtu', [CompletionResultType]::ParameterName, 'Path MTU in bytes for READ PSN reservation, instead of inferring it')
            [CompletionResult]::new('--max-flows', '--max-flows', [CompletionResultType]::ParameterName, 'Most flows tracked at once')
            [CompletionResult]::new('-Z', '-Z ', [CompletionResultType]::ParameterName, 'Once the device is open, run as USER instead of root (tcpdump''s -Z, as `capture`): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then writes as USER; a --save-dir that does not exist yet is created and given to USER')
            [CompletionResult]::new('--relinquish-privileges', '--relinquish-privileges', [CompletionResultType]::ParameterName, 'Once the device is open, run as USER instead of root (tcpdump''s -Z, as `capture`): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then writes as USER; a --save-dir that does not exist yet is created and given to USER')
            [CompletionResult]::new('--promisc', '--promisc', [CompletionResultType]::ParameterName, 'Put the interface into promiscuous mode')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Print the analysis report (as `read --summary`) after the screen closes; with --json, the report''s JSON document')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'With --summary: the report as one JSON document')
            [CompletionResult]::new('--encap-session', '--encap-session', [CompletionResultType]::ParameterName, 'Split flows by mirror session (ERSPAN session ID / VXLAN VNI) too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roce-inspect;help' {
            [CompletionResult]::new('read', 'read', [CompletionResultType]::ParameterValue, 'Decode a pcap or pcapng capture file (`-` reads standard input)')
            [CompletionResult]::new('capture', 'capture', [CompletionResultType]::ParameterValue, 'Capture live from a network interface and decode RoCE packets as they arrive')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest''s ib_write_bw')
            [CompletionResult]::new('correlate', 'correlate', [CompletionResultType]::ParameterValue, 'Match one job''s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction')
            [CompletionResult]::new('nccl', 'nccl', [CompletionResultType]::ParameterValue, 'See one NCCL job through NCCL''s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE')
            [CompletionResult]::new('plot', 'plot', [CompletionResultType]::ParameterValue, 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL''s steps (SVG, or PNG when OUT ends in .png)')
            [CompletionResult]::new('top', 'top', [CompletionResultType]::ParameterValue, 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roce-inspect;help;read' {
            break
        }
        'roce-inspect;help;capture' {
            break
        }
        'roce-inspect;help;generate' {
            break
        }
        'roce-inspect;help;correlate' {
            break
        }
        'roce-inspect;help;nccl' {
            break
        }
        'roce-inspect;help;export' {
            break
        }
        'roce-inspect;help;list' {
            break
        }
        'roce-inspect;help;plot' {
            break
        }
        'roce-inspect;help;top' {
            break
        }
        'roce-inspect;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
