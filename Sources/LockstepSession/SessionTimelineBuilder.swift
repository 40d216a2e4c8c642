import Foundation
import LockstepFiles

/// Builds a ``SessionTimeline`` from a ``Session``: resolves references, detects cycles, checks
/// regions and crossfades, collecting every problem.
///
/// Linear in the number of cues and automation entries (names are looked up in dictionaries, a
/// chain of `after`/`with` is followed without recursion), so a session of 100 000 cues, or an
/// `after` chain 100 000 long, resolves in a fraction of a second.
struct SessionTimelineBuilder {
    /// The matrix a cue plays through (see ``SessionTimeline/Cue/channelMatrix``); a map that does
    /// not fit the file was reported by ``Session/parse(text:path:)`` and falls back to the default.
    static func channelMatrix(_ cue: SessionDocument.Cue, layer: SessionDocument.Layer?, fileChannels: Int,
                              outputs: Int) -> ChannelMatrix? {
        if let map = cue.channelMap ?? layer?.channelMap,
           let matrix = try? map.matrix(inputs: fileChannels, outputs: outputs) {
            return matrix
        }
        return ChannelMatrix.standardDownmix(from: fileChannels, to: outputs)
    }

    let session: Session
    let rate: Double
    var diagnostics: [SessionDiagnostic] = []
    var cues: [SessionTimeline.Cue] = []
    /// Each cue's index by name (the first cue with a name).
    var cueIndex: [String: Int] = [:]
    /// 0: not visited, 1: in progress, 2: done, 3: failed.
    var state: [Int8] = []
    /// Each cue's start as its continue mode and the previous cue's make it (a cue a previous
    /// cue continues into starts with or after it).
    var starts: [SessionDocument.Start] = []
    /// Samples added to each cue's start: its pre-wait, and the post-wait of an auto-continue
    /// into it.
    var waits: [Int64] = []
    /// Each cue's previous cue in its list (the cue list, or its group's): the one it follows
    /// when it names no start.
    var previous: [Int?] = []
    /// Each cue's next cue in its list.
    var next: [Int?] = []
    /// The crossfade a cue of a playlist group takes from its group when it gives none.
    var inheritedCrossfade: [SessionTime?] = []
    /// Each group's own cues, by group index, in file order.
    var children: [Int: [Int]] = [:]
    /// Names "did you mean" may still compare: each suggestion searches every name, so once
    /// 200 000 comparisons are spent unknown names get none (thousands of unknown references to
    /// thousands of cues stay linear). The first suggestion is always made.
    private var suggestionBudget = 200_000

    /// The latest sample a cue may start on: far beyond any show, and far enough inside `Int64`
    /// that its end (at most a week later) and a `go` time added to it cannot overflow.
    static let latestStart = Int64.max / 4

    init(session: Session, rate: Double) {
        self.session = session
        self.rate = rate
    }

    mutating func build() throws(SessionError) -> SessionTimeline {
        let document = session.document
        let layers = document.layers.map { SessionTimeline.Layer(name: $0.name, gainDB: $0.gainDB, ports: $0.ports) }
        let layerNames = layers.map(\.name)
        var layerIndex: [String: Int] = [:]
        for (index, name) in layerNames.enumerated() where layerIndex[name] == nil { layerIndex[name] = index }
        cues.reserveCapacity(document.cues.count)
        for (index, cue) in document.cues.enumerated() {
            let info = session.files[index]
            let name = SessionParser.excerpt(cue.name), file = SessionParser.excerpt(cue.file)
            let layer = layerIndex[cue.layer] ?? 0
            let playsOnLayer = cue.action.type == .audio || (cue.action.type == .fade && cue.keyLocations["layer"] != nil)
            if playsOnLayer && layerIndex[cue.layer] == nil {
                diagnostics.append(.init(.unknownLayer, at: cue.location(of: "layer"),
                    "cue '\(name)': unknown layer '\(SessionParser.excerpt(cue.layer))'\(suggestion(for: cue.layer, in: layerNames)); declare it under 'layers:' or use \(Self.oneOf(layerNames))"))
            }
            let regionStart = cue.from.map { $0.samples(at: info.sampleRate) } ?? 0
            let regionEnd = cue.to.map { $0.samples(at: info.sampleRate) } ?? info.frameCount
            if info.frameCount > 0 {      // (an unreadable file is reported already)
                if regionEnd > info.frameCount {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: "to"),
                        "cue '\(name)': 'to' \(cue.to!) is past the end of '\(file)' (\(info.frameCount) frames, \(Self.seconds(Double(info.frameCount) / info.sampleRate))); use a position inside the file or leave 'to' out"))
                } else if regionStart >= regionEnd {
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: cue.to != nil && regionStart < info.frameCount ? "to" : "from"),
                        "cue '\(name)': the region from frame \(regionStart) to \(regionEnd) of '\(file)' is empty; 'from' must come before 'to' (and before the file's end, \(info.frameCount) frames)"))
                }
            }
            let playCount: Int? = if case .times(let n) = cue.loop { n } else { nil }
            let regionFrames = max(0, regionEnd - regionStart)
            var length: Int64?
            if cue.action.type != .audio {
                length = cue.action.duration?.samples(at: rate) ?? 0
            } else if let playCount {
                // In floating point: a long region played a million times overflows Int64.
                let samples = (Double(regionFrames) * Double(playCount) * rate / info.sampleRate).rounded()
                if samples <= Double(SessionTime.maximumSamples) {
                    length = Int64(samples)
                } else {
                    length = SessionTime.maximumSamples
                    diagnostics.append(.init(.invalidTime, at: cue.location(of: cue.keyLocations["loop"] != nil ? "loop" : "file"),
                        "cue '\(name)' plays \(Self.seconds(samples / rate)), longer than a week; play fewer loops or a shorter region"))
                }
            }
            cues.append(SessionTimeline.Cue(
                name: cue.name, index: index, layer: layer, path: info.path, fileRate: info.sampleRate,
                fileChannels: info.channelCount, regionStart: regionStart, regionEnd: regionEnd, playCount: playCount,
                trigger: nil, offsetFromTrigger: 0, start: nil, length: length, gainDB: cue.gainDB,
                fadeIn: cue.fadeIn?.samples(at: rate) ?? 0, fadeOut: cue.fadeOut?.samples(at: rate) ?? 0,
                crossfadeIn: 0, crossfadeOut: 0,
                channelMatrix: Self.channelMatrix(cue, layer: document.layers.first { $0.name == cue.layer },
                                                  fileChannels: info.channelCount, outputs: document.channelCount)))
            cues[index].group = cue.action.parent
            cues[index].id = index
            if cueIndex[cue.name] == nil { cueIndex[cue.name] = index }
            if let length {
                for (key, value) in [("fade_in", cue.fadeIn), ("fade_out", cue.fadeOut)] {
                    if let value, value.samples(at: rate) > length {
                        diagnostics.append(.init(.conflict, at: cue.location(of: key),
                            "cue '\(name)': \(key) \(value) is longer than the cue (\(Self.seconds(Double(length) / rate))); shorten it"))
                    }
                }
            } else if cue.fadeOut != nil {
                diagnostics.append(.init(.conflict, at: cue.location(of: "fade_out"),
                    "cue '\(name)' loops forever, so it has no end to fade out at; give 'loop' a count or remove 'fade_out'"))
            }
        }
        resolveContinueModes()
        state = Array(repeating: 0, count: cues.count)
        for index in cues.indices where state[index] == 0 { resolveChain(from: index) }
        resolveGroupLengths()
        resolveActions(layerIndex: layerIndex)

        // Automation, sorted by time per layer (each point with its entry, for errors).
        var entries = Array(repeating: [(point: SessionTimeline.AutomationPoint, entry: Int)](), count: layers.count)
        for (number, entry) in document.automation.enumerated() {
            guard let layer = layerIndex[entry.layer] else {
                diagnostics.append(.init(.unknownLayer, at: entry.keyLocations["layer"] ?? entry.location,
                    "automation: unknown layer '\(SessionParser.excerpt(entry.layer))'\(suggestion(for: entry.layer, in: layerNames)); use \(Self.oneOf(layerNames))"))
                continue
            }
            // A ramp is 0 to an hour, as a control command's (ControlRange: one range, one message).
            let ramp = entry.ramp.samples(at: rate)
            do throws(ControlRangeError) {
                try ControlRange.checkRamp(seconds: Double(ramp) / rate, for: "automation \(number + 1)")
            } catch {
                diagnostics.append(.init(.invalidTime, at: entry.keyLocations["ramp"] ?? entry.location, error.message))
                continue
            }
            entries[layer].append((.init(start: entry.at.samples(at: rate), ramp: ramp, gainDB: entry.gainDB), number))
        }
        for index in entries.indices { entries[index].sort { ($0.point.start, $0.entry) < ($1.point.start, $1.entry) } }
        for (layer, points) in entries.enumerated() {
            for (a, b) in zip(points, points.dropFirst()) where a.point.start + a.point.ramp > b.point.start {
                diagnostics.append(.init(.conflict, at: document.automation[b.entry].location,
                    "automation on layer '\(SessionParser.excerpt(layers[layer].name))': a ramp starts at \(Self.seconds(Double(b.point.start) / rate)) while the previous one (until \(Self.seconds(Double(a.point.start + a.point.ramp) / rate))) still runs; start it later or shorten the earlier ramp"))
            }
        }
        if !diagnostics.isEmpty { throw SessionError(diagnostics) }
        var timeline = SessionTimeline(rate: rate, channelCount: document.channelCount, layers: layers, cues: cues,
                                       automation: entries.map { $0.map(\.point) })
        // The action cues placed from the session's start act from the start.
        timeline.applyActions(of: timeline.cues.indices.filter { timeline.cues[$0].trigger == nil })
        return timeline
    }

    /// The cue `index`'s start depends on (through `after`, `with` or the list order), or nil
    /// when it starts on its own (`at`, `manual`, the first cue) or names no cue (reported when
    /// it is resolved).
    private func dependency(of index: Int) -> Int? {
        switch starts[index] {
        case .at, .atTimecode, .manual: return nil
        case .after(let name), .with(let name): return cueIndex[name]
        case .afterPrevious: return previous[index]
        }
    }

    /// Resolves cue `start` and every unresolved cue its start depends on: follows the chain of
    /// dependencies (reporting a cycle where it closes), then resolves it from its far end.
    mutating func resolveChain(from start: Int) {
        var chain: [Int] = []
        var current: Int? = start
        while let index = current, state[index] < 2 {
            if state[index] == 1 {
                let names = chain[chain.lastIndex(of: index)!...].map { cues[$0].name } + [cues[index].name]
                let cue = session.document.cues[index]
                diagnostics.append(.init(.cycle, at: cue.location(of: Self.startKey(cue.start)),
                    "cue '\(SessionParser.excerpt(cue.name))': its start depends on itself (\(Self.path(names))); break the cycle by giving one of these cues 'at:'"))
                state[index] = 3
                break
            }
            state[index] = 1
            chain.append(index)
            current = dependency(of: index)
        }
        for index in chain.reversed() where state[index] == 1 {
            state[index] = resolve(index) ? 2 : 3
            if state[index] == 2, cues[index].trigger == nil { cues[index].start = cues[index].offsetFromTrigger }
        }
    }

    /// Resolves cue `index`'s trigger and offset, once the cue it depends on is resolved (or
    /// has failed); false if it cannot be placed.
    private mutating func resolve(_ index: Int) -> Bool {
        let cue = session.document.cues[index]
        let offset = (cue.offset?.samples(at: rate) ?? 0) + waits[index]
        switch starts[index] {
        case .at(let time):
            cues[index].offsetFromTrigger = time.samples(at: rate) + offset
            return true
        case .atTimecode(let label):
            // (Checked by the parser: the session declares its timecode, the label is valid.)
            guard let timecode = session.document.timecode, let sample = try? timecode.sample(of: label, sampleRate: rate) else { return false }
            cues[index].offsetFromTrigger = sample + offset
            return true
        case .manual:
            cues[index].trigger = index
            cues[index].offsetFromTrigger = offset
            return true
        case .with(let name), .after(let name):
            let isAfter = if case .after = starts[index] { true } else { false }
            guard let target = cueIndex[name] else {
                let names = suggestionBudget > 0 ? cues.map(\.name) : []
                diagnostics.append(.init(.unknownCue, at: cue.location(of: isAfter ? "after" : "with"),
                    "cue '\(SessionParser.excerpt(cue.name))': unknown cue '\(SessionParser.excerpt(name))'\(suggestion(for: name, in: names)); name a cue of this session"))
                return false
            }
            return follow(index, target: target, isAfter: isAfter, offset: offset)
        case .afterPrevious:
            guard let before = previous[index] else {
                cues[index].offsetFromTrigger = offset
                return true
            }
            return follow(index, target: before, isAfter: true, offset: offset)
        }
    }

    private mutating func follow(_ index: Int, target: Int, isAfter: Bool, offset: Int64) -> Bool {
        guard state[target] == 2 else { return false }
        let cue = session.document.cues[index]
        let name = SessionParser.excerpt(cue.name), targetName = SessionParser.excerpt(cues[target].name)
        cues[index].trigger = cues[target].trigger
        var start = cues[target].offsetFromTrigger + offset
        if isAfter {
            if isGroup(target) { resolveGroupLength(target) }
            guard let length = cues[target].length else {
                diagnostics.append(.init(.conflict, at: cue.location(of: Self.startKey(cue.start)),
                    "cue '\(name)' follows '\(targetName)', which loops forever and never ends; give '\(targetName)' a loop count, or start this cue with 'at:' or 'with:'"))
                return false
            }
            // (A group's own `crossfade` is between its cues.)
            let written = (cue.action.type == .group ? nil : cue.crossfade) ?? inheritedCrossfade[index]
            let crossfade = written?.samples(at: rate) ?? 0
            if crossfade > 0 {
                let mine = cues[index].length
                if crossfade > length || (mine != nil && crossfade > mine!) {
                    diagnostics.append(.init(.conflict, at: cue.location(of: "crossfade"),
                        "cue '\(name)': crossfade \(written!) is longer than \(crossfade > length ? "'\(targetName)' (\(Self.seconds(Double(length) / rate)))" : "this cue"); shorten the crossfade"))
                    return false
                }
                cues[index].crossfadeIn = crossfade
                cues[target].crossfadeOut = max(cues[target].crossfadeOut, crossfade)
            }
            start += length - crossfade
        }
        // Each step adds at most a few weeks: only an absurdly long chain gets here.
        guard start <= Self.latestStart else {
            diagnostics.append(.init(.conflict, at: cue.location(of: Self.startKey(cue.start)),
                "cue '\(name)' would start more than \(Self.latestStart) samples after \(cues[index].trigger == nil ? "the session's start" : "its go"), beyond what the timeline counts; shorten the chain of cues before it"))
            return false
        }
        cues[index].offsetFromTrigger = start
        return true
    }

    /// `; did you mean 'x'?` while the budget lasts, else nothing.
    mutating func suggestion(for word: String, in candidates: [String]) -> String {
        guard suggestionBudget > 0, !candidates.isEmpty else { return "" }
        suggestionBudget -= candidates.count
        return Suggest.hint(for: word, in: candidates)
    }

    /// "one of a, b, c", or for many names the first few and how many there are.
    static func oneOf(_ names: [String]) -> String {
        if names.isEmpty { return "a declared layer" }
        if names.count <= 8 { return "one of " + names.map(SessionParser.excerpt).joined(separator: ", ") }
        return "one of the \(names.count) layers (" + names.prefix(5).map(SessionParser.excerpt).joined(separator: ", ") + ", …)"
    }

    /// `'a' → 'b' → 'a'`, shortened in the middle when long.
    static func path(_ names: [String]) -> String {
        let quoted = { (name: String) in "'\(SessionParser.excerpt(name))'" }
        if names.count <= 10 { return names.map(quoted).joined(separator: " → ") }
        return (names.prefix(5).map(quoted) + ["… (\(names.count - 1) cues in all)"] + names.suffix(3).map(quoted))
            .joined(separator: " → ")
    }

    private static func startKey(_ start: SessionDocument.Start) -> String {
        switch start {
        case .after: return "after"
        case .with: return "with"
        case .at, .atTimecode, .manual: return "at"
        case .afterPrevious: return "file"
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
}
