import Foundation

/// The tests' independent position probe: `Tests/Fixtures/jack-probe.c`, a JACK client of its own
/// (a process per server: libjack holds one server per process) that reads a port and notes, per
/// cycle, its first sample and when the cycle began on this machine's monotonic clock — so two
/// probes on two servers, whatever clocks those servers keep, say what each played at the same
/// moment.
public struct JACKPositionProbe {
    /// One cycle: when it began (µs on the probe's monotonic clock) and the first sample read.
    public struct Cycle: Sendable {
        public var time: Double
        public var value: Float
    }

    private let process: RunningCLI

    /// Starts probing `port` on `server` for `seconds`.
    public init(server: String, port: String, seconds: Double) throws {
        process = try CLI.spawn([server, port, String(seconds)], executable: try FixtureProgram.compiled("jack-probe"))
    }

    /// Waits for the probe to end; returns its cycles, each cycle's start fitted: the probe's
    /// callback runs after the clients it reads from, late by their work, so a line through the
    /// least late callbacks (the fastest of every 2 seconds) against the server's own smooth cycle
    /// times gives the cycle starts on the probe's clock.
    public func cycles() throws -> [Cycle] {
        let result = process.wait(timeout: 120)
        guard result.status == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "jack-probe: \(result.stderr)"])
        }
        let rows: [(time: Double, server: Double, value: Float)] = result.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let time = Double(fields[0]), let server = Double(fields[1]), let value = Float(fields[2]) else { return nil }
            return (time, server, value)
        }
        guard let first = rows.first, let last = rows.last, last.server > first.server else { return [] }
        // Callback time against server time: a first slope, then the lateness of each callback.
        let slope = (last.time - first.time) / (last.server - first.server)
        let lateness = rows.map { $0.time - first.time - slope * ($0.server - first.server) }
        let window = 94
        let fastest: [(x: Double, y: Double)] = stride(from: 0, to: rows.count, by: window).map { start in
            let index = (start..<min(rows.count, start + window)).min { lateness[$0] < lateness[$1] }!
            return (rows[index].server - first.server, lateness[index])
        }
        let meanX = fastest.map(\.x).reduce(0, +) / Double(fastest.count)
        let meanY = fastest.map(\.y).reduce(0, +) / Double(fastest.count)
        let spread = fastest.map { ($0.x - meanX) * ($0.x - meanX) }.reduce(0, +)
        let tilt = spread > 0 ? fastest.map { ($0.x - meanX) * ($0.y - meanY) }.reduce(0, +) / spread : 0
        let base = meanY - tilt * meanX
        return rows.map { Cycle(time: first.time + base + (slope + tilt) * ($0.server - first.server), value: $0.value) }
    }
}
