import Foundation
import Lockstep
import LockstepControl
import LockstepJACK
import LockstepSchema
import LockstepSession
import LockstepShow

extension SessionRun {
    /// Prints the run's summary: one line (and the outputs' changes), or with `--json` one
    /// ``SessionRunReport``.
    func report(_ show: LiveSession, outcome: LiveSession.Outcome, endPosition: Int64, surfaces: ControlSurfaces,
                outputs: [JACKDevice.OutputCompensation], interrupted: Bool) {
        let engine = show.engine, device = show.device, player = show.player
        let rate = player.rate
        let timeline = player.timeline
        let (finalOutputs, outputLines) = command.jack.outputsAtEnd(outputs, device: device, until: engine.renderedSampleTime)
        guard command.json else {
            let placed = timeline.cues.filter { $0.start != nil }.count
            print("\(command.command == "play" ? "played" : "ran") \(command.file): \(placed) of \(timeline.cues.count) cues placed, ended at \(Terminal.time(Double(endPosition) / rate)) "
                  + "(\(endPosition) samples) at \(Int(rate)) Hz through '\(device.name)'; discontinuities: \(engine.discontinuityCount)"
                  + surfaces.summary
                  + (outcome.recording.map { "; recorded \($0.framesWritten) frames to \($0.path)" } ?? "")
                  + (interrupted ? " (interrupted)" : ""))
            for line in outputLines { print(line) }
            return
        }
        var report = SessionRunReport(
            file: command.file, startSampleTime: show.startSampleTime, from: show.fromPosition, endPosition: endPosition,
            sampleRate: Int(rate), interrupted: interrupted, discontinuities: engine.discontinuities.map(DiscontinuityRecord.init),
            cues: TimelineReport(path: command.file, timeline: timeline).cues, error: outcome.error,
            server: launcher.description.isEmpty ? nil : launcher.description,
            lateStarts: player.lateStarts.map { .init(position: $0.position, sampleTime: $0.sampleTime, skippedFrames: $0.skippedFrames) },
            rateChanges: show.rateChanges.map(RateChangeRecord.init),
            osc: surfaces.osc?.statistics, oscTCP: surfaces.oscTCP?.statistics, midi: surfaces.midi?.summary,
            web: surfaces.web?.statistics,
            recording: outcome.recording.map { .init(file: $0.path, frames: $0.framesWritten,
                                                     startSampleTime: $0.startSampleTime, lostFrames: $0.lostFrames) },
            outputs: finalOutputs, callbackTime: PlayReport.CallbackTime(device.callbackTimes),
            renderHelper: device.hasRenderHelper
                ? PlayReport.RenderHelper(sharedCycles: engine.renderSharing.sharedCycles, helperChunks: engine.renderSharing.helperChunks)
                : nil)
        report.discontinuityCounts = Dictionary(uniqueKeysWithValues: engine.discontinuityCounts.map { ($0.key.rawValue, $0.value) })
        report.startJACKFrame = show.startSampleTime.map { device.jackFrameTime(forSampleTime: $0) }
        report.ignoredGos = player.ignoredGoCount
        report.resumed = show.resumed.map(\.status)
        print(JSONSchema.line(report))
    }

    /// The typed-line surface: parses one line into a command, has the dispatcher carry it out,
    /// and shows the reply — `status` as one JSON line on standard output, anything else as a
    /// note (errors as `control: …`).
    func typed(_ line: String, dispatcher: ControlDispatcher, display: SessionDisplay) {
        let verb = ControlLine.verb(of: line)
        let command: ControlCommand
        do { command = try ControlLine.parse(line) } catch {
            display.note("control: \(error.message)", level: .error)
            return
        }
        let reply = dispatcher.execute(command, address: verb)
        if !reply.isOK {
            display.note("control: \(reply.summary)", level: .error)
        } else if command == .status, let data = reply.data {
            // Above the live display, so the next redraw does not overwrite it.
            StatusArea.shared.printAbove(data.json + "\n", to: STDOUT_FILENO)
        } else {
            display.note(reply.summary)
        }
    }
}

extension RateChangeRecord {
    /// The report of a rate change a show played on through.
    init(_ change: ShowRateChange) {
        self.init(sampleTime: change.sampleTime, sampleRate: change.sampleRate, position: change.position,
                  resumedSampleTime: change.resumedSampleTime, resumedJACKFrame: change.resumedJACKFrame,
                  fileFrames: change.fileFrames)
    }
}

extension LiveSession.Resumed {
    /// As `status` and the run's report give it.
    var status: ControlStatus.Resumed {
        ControlStatus.Resumed(position: position, sampleTime: sampleTime, gap: gap, clock: clock, secondsAway: secondsAway)
    }
}
