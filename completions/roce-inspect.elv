
use builtin;
use str;

set edit:completion:arg-completer[roce-inspect] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roce-inspect'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roce-inspect'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand read 'Decode a pcap or pcapng capture file (`-` reads standard input)'
            cand capture 'Capture live from a network interface and decode RoCE packets as they arrive'
            cand generate 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest''s ib_write_bw'
            cand correlate 'Match one job''s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction'
            cand nccl 'See one NCCL job through NCCL''s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host'
            cand export 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark'
            cand list 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
            cand interfaces 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
            cand plot 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL''s steps (SVG, or PNG when OUT ends in .png)'
            cand top 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roce-inspect;read'= {
            cand -r 'The capture file, tcpdump style (`read -r trace.pcap`); same as FILE'
            cand -w 'Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file instead of printing them, each with its analysis marks as the packet comment (Wireshark''s `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`'
            cand --write 'Write the shown frames (after -Y, --qp, --opcode), unmodified, to this pcapng file instead of printing them, each with its analysis marks as the packet comment (Wireshark''s `frame.comment`), e.g. `-Y analysis.retransmission -w resent.pcapng`'
            cand --threads 'Threads that decode and format packets (default: the cores available), while the calling thread analyses them in order and writes the output, which is the same whatever the number; 1 reads on one thread. Several threads are used while a pcap/pcapng file is read from its memory mapping (not standard input, not with --mirror-time)'
            cand -c 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand --count 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand -f 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --filter 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --qp 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow'
            cand --opcode 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet'
            cand -Y 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet'
            cand --display-filter 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet'
            cand -T 'Output format, as tshark''s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)'
            cand -e 'A field printed by -T fields (repeatable, in order); --list-fields lists them'
            cand -E 'A -T fields option as tshark''s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`'
            cand --color 'Colour: auto (terminal and NO_COLOR unset), always, never'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`'
            cand --vxlan-port 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux''s old default'
            cand --mtu 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`'
            cand --max-flows 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed'
            cand --html 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed'
            cand --findings 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)'
            cand --list-fields 'List every field that -Y and -T fields -e read, with its type and description (like `tshark -G fields`), and exit'
            cand --marks 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`'
            cand --json 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`'
            cand -V 'Print the full header tree of every packet, like `tshark -V`'
            cand --verbose 'Print the full header tree of every packet, like `tshark -V`'
            cand --all 'Also list frames that are not RoCE, one short line each'
            cand -n 'Accepted for tcpdump compatibility; addresses are never resolved to names'
            cand --mirror-time 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector''s capture time (frames without one keep the capture time)'
            cand --summary 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq ''.flows[] | {dest_qp, psn}''`'
            cand -q 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
            cand --quiet 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
            cand --messages 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`'
            cand --gaps 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`'
            cand --encap-session 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)'
            cand --wide 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;capture'= {
            cand -i 'The interface, tcpdump style (`capture -i eth0`); same as IFACE'
            cand --snaplen 'Bytes kept of each frame (1-262144); longer frames are cut and their ICRC is reported as not checkable'
            cand --buffer-size 'Kernel capture buffer size: bytes, or with a K, M or G suffix (powers of 1024)'
            cand -w 'Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C); with -Y, only the shown frames, as pcapng with their analysis marks as packet comments (complete once the capture stops)'
            cand --write 'Also write every captured frame, unmodified, to this pcap file (valid even after Ctrl-C); with -Y, only the shown frames, as pcapng with their analysis marks as packet comments (complete once the capture stops)'
            cand --duration 'Stop after this many seconds (fractions allowed), e.g. `--duration 30`'
            cand --parquet 'Also write every RoCE frame and, at the end, the report as Parquet tables under DIR, as `export` does; the capture is named after the -w file, else IFACE-UNIXTIME'
            cand --host 'With --parquet: the `host` column (default: this machine''s host name)'
            cand -Z 'Once the device and the -w file are open, run as USER instead of root (tcpdump''s -Z): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w file and a new --parquet folder are given to USER'
            cand --relinquish-privileges 'Once the device and the -w file are open, run as USER instead of root (tcpdump''s -Z): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. The -w file and a new --parquet folder are given to USER'
            cand -c 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand --count 'Stop after N frames (counted after the BPF filter), like `tcpdump -c N`'
            cand -f 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --filter 'libpcap BPF filter expression, like tcpdump''s, e.g. `-f ''udp port 4791 and host 10.0.0.1''`'
            cand --qp 'Show only packets to this destination QP (decimal or 0x hex), e.g. `--qp 0x11`. Reports (`--summary`, `--messages`, `--gaps`) still cover every flow'
            cand --opcode 'Show only this opcode: a number (`--opcode 0x0a`), a full name (`RC_RDMA_WRITE_ONLY`) or an operation for every transport (`RDMA_WRITE_ONLY`, `ACKNOWLEDGE`, `CNP`). Reports still cover every packet'
            cand -Y 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet'
            cand --display-filter 'Show only the packets this display filter passes: Wireshark''s display-filter language on the `--json` keys joined by dots, e.g. `-Y ''bth.dest_qp == 0x11 && bth.psn > 100''`, `-Y ''aeth.nak || analysis.retransmission''` (--list-fields lists the fields). Reports still cover every packet'
            cand -T 'Output format, as tshark''s -T: `fields` prints the -e fields of each packet, one line each (`-T fields -e frame -e bth.psn -e analysis.retransmission`)'
            cand -e 'A field printed by -T fields (repeatable, in order); --list-fields lists them'
            cand -E 'A -T fields option as tshark''s -E (repeatable): `separator=,` (`/t` tab, `/s` space), `header=y`, `quote=d|s|n`, `aggregator=;`, `occurrence=f|l|a|N`'
            cand --color 'Colour: auto (terminal and NO_COLOR unset), always, never'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable), e.g. `--roce-port 9741`'
            cand --vxlan-port 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable), e.g. `--vxlan-port 8472` for Linux''s old default'
            cand --mtu 'Path MTU in bytes for READ PSN reservation, instead of inferring it from FIRST/MIDDLE payloads, e.g. `--mtu 4096`'
            cand --max-flows 'Most flows tracked at once; RoCE frames of further flows are counted as untracked, so memory stays bounded when QPNs are sprayed'
            cand --html 'Also write a self-contained HTML report (tables, loss stories, congestion, plots) to FILE; without -q/--summary/--messages/--gaps nothing else is printed'
            cand --findings 'Findings shown at the top of the text report: `top` (the most severe, within 15 lines) or `all` (every one, each with its cause and advice)'
            cand --promisc 'Put the interface into promiscuous mode (off by default; a mirror port usually needs it)'
            cand --buffered 'Hand packets over in blocks (at most 100 ms late) instead of one by one: much higher packet rates without drops. The default when standard output is not a terminal or a pipe (e.g. `-w FILE > /dev/null`); this forces it for terminals and pipes too'
            cand --marks 'Run the analysis alongside the packet lines and mark each packet with its verdicts (`[RETX]`, `[GAP n]`, `[NAKed]`, …; the `analysis` object in --json). Implied by a -Y filter that reads `analysis.*`'
            cand --json 'One JSON object per packet per line (NDJSON), for jq: `--json | jq .bth.psn`'
            cand -V 'Print the full header tree of every packet, like `tshark -V`'
            cand --verbose 'Print the full header tree of every packet, like `tshark -V`'
            cand --all 'Also list frames that are not RoCE, one short line each'
            cand -n 'Accepted for tcpdump compatibility; addresses are never resolved to names'
            cand --mirror-time 'Time mirrored frames by their ERSPAN type III hardware timestamp instead of the collector''s capture time (frames without one keep the capture time)'
            cand --summary 'Print the analysis report at the end: QP connections and flows, PSN gaps and retransmissions, NAKs, ECN/CNP congestion, ICRC failures. With `--json`, one JSON document instead of per-packet lines: `read t.pcap --summary --json | jq ''.flows[] | {dest_qp, psn}''`'
            cand -q 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
            cand --quiet 'Print only the reports, not the packets (`-q` alone means `--summary -q`), like `tshark -q`'
            cand --messages 'List the reassembled messages (SEND, WRITE, READ, atomics) per flow; NDJSON with `--json`'
            cand --gaps 'List the PSN gaps with their NAK and retransmission (the loss stories); NDJSON with `--json`'
            cand --encap-session 'Split flows by mirror session too: the ERSPAN session ID or VXLAN VNI the frame came through (one job mirrored from several ports)'
            cand --wide 'Print every column of the report tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;generate'= {
            cand --peer 'Be the client and write to this server: an IPv4 address, an IPv6 address, or a GID'
            cand --oob-port 'TCP port of the out-of-band exchange (QPN, PSN, GID, rkey, address, MTU)'
            cand --device 'RDMA device to use (default: the first device with an active Ethernet port)'
            cand --ib-port 'Port number on the device (1-based, as in `ibv_devinfo`)'
            cand --gid-index 'GID-table index to send from (default: the first RoCE v2 GID of the peer''s address family, preferring non-link-local ones)'
            cand --gpu 'Put the buffer in the memory of CUDA GPU N instead of host memory (needs the `gpu` build feature, an NVIDIA driver, and a NIC that can register GPU memory through dma-buf or nvidia-peermem)'
            cand --size 'Bytes per RDMA WRITE (client), with an optional K, M or G suffix (powers of 1024)'
            cand --iters 'WRITEs per QP (client); the default when --duration is not given is 5000, perftest''s'
            cand --duration 'Send for this many seconds instead of a number of WRITEs (client)'
            cand --tx-depth 'WRITEs outstanding per QP (client): the send-queue depth'
            cand --qps 'Number of parallel RC QPs (client); each writes to its own slice of the server''s buffer'
            cand --tclass 'IP traffic class of our packets (the GRH traffic class: DSCP << 2 | ECN)'
            cand --mtu 'Cap the path MTU (bytes: 256, 512, 1024, 2048 or 4096); otherwise the smaller of the two ports'' active MTUs'
            cand --listen 'Be the server: wait for a client on --oob-port and let it write into our buffer'
            cand --imm 'Send RDMA WRITE WITH IMMEDIATE instead of RDMA WRITE (client); the server posts receives and counts the immediates'
            cand --json 'Print the QP lines and the results as one JSON document instead of text and a table'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;correlate'= {
            cand -f 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`'
            cand --filter 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable)'
            cand --window 'Seconds a packet copy waits for its copy at the link''s other end (fractions allowed); copies unmatched after it are lost or missed. Bounds memory'
            cand --color 'Colour: auto (terminal and NO_COLOR unset), always, never'
            cand --json 'Print one JSON document instead of tables'
            cand --wide 'Print every column of the tables however wide they are (by default, on a terminal, the least important columns are hidden to fit its width), as for `read --wide`'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;nccl'= {
            cand -f 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`'
            cand --filter 'libpcap BPF filter expression applied to every file, e.g. `-f ''host 10.0.0.1''`'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable)'
            cand --collective 'The collective that ran, for the algorithm bandwidth (busbw / nccl-tests'' factor); needs --ranks'
            cand --ranks 'Ranks of the job, for --collective'
            cand --html 'Also write a self-contained HTML page (connections, a timeline of every step) to FILE'
            cand --json 'Print one JSON document instead of tables'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;export'= {
            cand --parquet 'Dataset folder: the tables go to DIR/TABLE/capture=NAME/part-0.parquet (NAME: the file name), replacing an earlier export of a capture of the same name'
            cand --host 'The `host` column: the machine or switch port the captures come from (default: each file''s name without its extension)'
            cand -f 'libpcap BPF filter expression applied before decoding, as for `read`'
            cand --filter 'libpcap BPF filter expression applied before decoding, as for `read`'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable), as for `read`'
            cand --mtu 'Path MTU in bytes for READ PSN reservation, as for `read` (256, 512, 1024, 2048, 4096)'
            cand --max-flows 'Most flows tracked at once, as for `read`'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;list'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'roce-inspect;interfaces'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'roce-inspect;plot'= {
            cand --kind 'What to draw: psn (PSN against time, tcptrace style), rate (throughput and congestion), latency (ACK RTT and READ latency CDFs), messages (message time lines), nccl (NCCL''s steps, one row per connection, as `nccl --html`)'
            cand -o 'Output file: SVG, or PNG when it ends in `.png`'
            cand --output 'Output file: SVG, or PNG when it ends in `.png`'
            cand --qp 'Only flows to this destination QP (decimal or 0x hex)'
            cand -f 'libpcap BPF filter expression applied while reading, as for `read -f`'
            cand --filter 'libpcap BPF filter expression applied while reading, as for `read -f`'
            cand --from 'Start of the time span drawn, seconds since the first frame'
            cand --to 'End of the time span drawn, seconds since the first frame'
            cand --bin 'Rate bin width in seconds (`--kind rate`), e.g. `--bin 0.0001`; default: about 1/60 of the span'
            cand --top 'Most flows drawn: the largest by payload bytes'
            cand --width 'Picture width in pixels'
            cand --scale 'PNG pixels per picture pixel: `--scale 2` draws a PNG twice as large with the same layout, for high-DPI screens (SVGs are unaffected)'
            cand --mtu 'Path MTU in bytes for READ PSN reservation, as for `read --mtu`'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;top'= {
            cand -i 'The interface, tcpdump style; same as IFACE'
            cand -r 'Replay a capture file (pcap or pcapng) at its own pace instead of capturing'
            cand --speed 'With -r: replay N times faster than the capture was taken (e.g. 10, 0.5)'
            cand -f 'libpcap BPF filter expression instead of the default RoCE filter'
            cand --filter 'libpcap BPF filter expression instead of the default RoCE filter'
            cand -Y 'Display filter at the start (as `/` sets it): the table counts only the packets it passes, e.g. `-Y ''bth.dest_qp == 0x11''`; the analysis still sees every packet'
            cand --display-filter 'Display filter at the start (as `/` sets it): the table counts only the packets it passes, e.g. `-Y ''bth.dest_qp == 0x11''`; the analysis still sees every packet'
            cand --snaplen 'Bytes kept of each frame (1-262144)'
            cand --buffer-size 'Kernel capture buffer size: bytes, or with a K, M or G suffix'
            cand --keep 'Most bytes of the latest frames kept in memory for `w` (written as pcapng): bytes, or with a K, M or G suffix; 0 keeps none'
            cand --save-dir 'Folder `w` writes its pcapng files into'
            cand --roce-port 'Also decode UDP destination port N as RoCEv2 (repeatable)'
            cand --vxlan-port 'Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable)'
            cand --mtu 'Path MTU in bytes for READ PSN reservation, instead of inferring it'
            cand --max-flows 'Most flows tracked at once'
            cand -Z 'Once the device is open, run as USER instead of root (tcpdump''s -Z, as `capture`): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then writes as USER; a --save-dir that does not exist yet is created and given to USER'
            cand --relinquish-privileges 'Once the device is open, run as USER instead of root (tcpdump''s -Z, as `capture`): default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then writes as USER; a --save-dir that does not exist yet is created and given to USER'
            cand --promisc 'Put the interface into promiscuous mode'
            cand --summary 'Print the analysis report (as `read --summary`) after the screen closes; with --json, the report''s JSON document'
            cand --json 'With --summary: the report as one JSON document'
            cand --encap-session 'Split flows by mirror session (ERSPAN session ID / VXLAN VNI) too'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roce-inspect;help'= {
            cand read 'Decode a pcap or pcapng capture file (`-` reads standard input)'
            cand capture 'Capture live from a network interface and decode RoCE packets as they arrive'
            cand generate 'Send RDMA WRITEs over libibverbs from host or GPU memory, like perftest''s ib_write_bw'
            cand correlate 'Match one job''s packets across several captures (one per host or mirror): loss located to a link, capture clocks aligned, one-way delay per link and direction'
            cand nccl 'See one NCCL job through NCCL''s eyes: its connections (clear-to-send and data writes), steps, rings and trees, and the straggler of every step, from one capture per host'
            cand export 'Write capture files as Parquet tables (packets, flows, connections, messages, gaps) for DuckDB, Polars or Spark'
            cand list 'List the interfaces libpcap can capture on, and how to capture NIC-offloaded RoCE'
            cand plot 'Draw a capture: PSN against time, rate and congestion, latency CDFs, message time lines, NCCL''s steps (SVG, or PNG when OUT ends in .png)'
            cand top 'A live dashboard of RoCE traffic: per-QP rates, packets, retransmissions, PSN gaps, NAKs, RNR NAKs, CE marks, CNPs and ACK RTT, updated as they happen (needs a terminal)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roce-inspect;help;read'= {
        }
        &'roce-inspect;help;capture'= {
        }
        &'roce-inspect;help;generate'= {
        }
        &'roce-inspect;help;correlate'= {
        }
        &'roce-inspect;help;nccl'= {
        }
        &'roce-inspect;help;export'= {
        }
        &'roce-inspect;help;list'= {
        }
        &'roce-inspect;help;plot'= {
        }
        &'roce-inspect;help;top'= {
        }
        &'roce-inspect;help;help'= {
        }
    ]
    $completions[$command]
}
