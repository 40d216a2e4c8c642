import Foundation
import LockstepSession

/// The picture of a session's timeline as SVG: a lane per layer, each placed cue a bar from its
/// first sample to its end (its fades drawn as white slopes, its crossfades as amber dashed ones),
/// cues waiting for go marked apart, a time axis, and a playhead.
///
/// The web page shows this very picture (served at `/timeline.svg`) and moves its playhead
/// live; `lockstep session check FILE --svg timeline.svg` writes it to a file. The drawing's
/// scale is in its root element: `data-x0` (the x of session sample 0), `data-samples-per-pixel`
/// and `data-rate`, so a script can put the playhead (`id="playhead"`) on any sample.
public struct TimelinePicture: Sendable {
    /// The timeline drawn.
    public var timeline: SessionTimeline
    /// Where the playhead stands (session samples); nil draws none.
    public var playhead: Int64?
    /// The manual cue a plain go fires next, drawn highlighted.
    public var selected: String?
    /// The picture's width in pixels.
    public var width: Double

    /// A picture of `timeline` with the playhead on `playhead` and `selected` highlighted.
    public init(timeline: SessionTimeline, playhead: Int64? = nil, selected: String? = nil, width: Double = 960) {
        self.timeline = timeline
        self.playhead = playhead
        self.selected = selected
        self.width = width
    }

    /// The height of one layer's lane, in pixels.
    public static let laneHeight = 44.0
    static let labelWidth = 110.0
    static let rightMargin = 80.0
    /// The height of the time axis above the first lane, in pixels.
    public static let axisHeight = 22.0
    static let colours = ["#3b82f6", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16"]

    /// The geometry of one bar, in session samples.
    struct Bar {
        var cue: SessionTimeline.Cue
        var start: Int64
        var end: Int64
        /// The end is open (the cue loops forever).
        var open: Bool
        /// Not placed: waits for go (drawn after the placed cues).
        var waiting: Bool
    }

    /// The SVG document.
    public var svg: String {
        let rate = timeline.rate
        // Placed cues where they play; cues waiting for go in a strip after them, each with its
        // length from where it would start now.
        var placedEnd: Int64 = Int64(rate)
        for cue in timeline.cues {
            guard let start = cue.start else { continue }
            placedEnd = max(placedEnd, cue.end ?? start + (cue.length ?? Int64(rate * 10)))
        }
        if let playhead { placedEnd = max(placedEnd, playhead) }
        let gap = max(Int64(rate / 2), placedEnd / 20)
        // Room on the right for the label of a bar that ends there (a short cue waiting for go).
        let plotWidth = max(100, width - Self.labelWidth - Self.rightMargin)
        /// The label a cue's bar carries.
        func label(_ cue: SessionTimeline.Cue) -> String { (cue.isManual && cue.trigger == cue.index ? "GO " : "") + cue.name }
        /// The bars, where the strip of cues waiting for go begins (after the placed cues and
        /// their labels) and where it ends, at `samplesPerPixel`: each cue waiting for go starts
        /// after the one before it and clear of its label.
        func layout(_ samplesPerPixel: Double) -> (bars: [Bar], stripFrom: Int64, waitingAt: Int64) {
            let labelsEnd = timeline.cues.compactMap { cue in cue.start.map { $0 + Int64(Self.labelPixels(label(cue)) * samplesPerPixel) } }.max()
            let stripFrom = max(placedEnd, labelsEnd ?? 0)
            var waitingAt = stripFrom + gap
            var bars: [Bar] = []
            for cue in timeline.cues {
                if let start = cue.start {
                    let end = cue.end ?? start + (cue.length ?? max(Int64(rate), placedEnd - start))
                    bars.append(Bar(cue: cue, start: start, end: max(end, start + 1), open: cue.length == nil && cue.end == nil, waiting: false))
                } else {
                    let length = cue.length ?? Int64(rate * 4)
                    // A chained cue waits with its trigger: drawn at its offset from it.
                    let base = cue.trigger.flatMap { trigger in bars.first { $0.cue.index == trigger && $0.waiting }?.start } ?? waitingAt
                    let start = base + (cue.trigger == cue.index ? 0 : cue.offsetFromTrigger)
                    bars.append(Bar(cue: cue, start: start, end: start + max(1, length), open: cue.length == nil, waiting: true))
                    let room = Int64(Self.labelPixels(label(cue)) * samplesPerPixel)
                    if cue.trigger == cue.index || cue.trigger == nil { waitingAt = max(waitingAt, start + max(max(1, length) + gap, room)) }
                }
            }
            return (bars, stripFrom, waitingAt)
        }
        // The scale depends on the strip's length and the strip on the labels' width at that
        // scale: a few rounds settle it.
        var samplesPerPixel = 0.0
        var (bars, stripFrom, waitingAt) = layout(samplesPerPixel)
        for _ in 0..<3 {
            samplesPerPixel = Double(max(waitingAt, stripFrom + gap)) / plotWidth
            (bars, stripFrom, waitingAt) = layout(samplesPerPixel)
        }
        let total = max(waitingAt, stripFrom + gap)
        samplesPerPixel = Double(total) / plotWidth
        let height = Self.axisHeight + Double(timeline.layers.count) * Self.laneHeight + 8
        func x(_ sample: Int64) -> Double { Self.labelWidth + Double(sample) / samplesPerPixel }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="\(f(width))" height="\(f(height))" \
            viewBox="0 0 \(f(width)) \(f(height))" data-x0="\(f(Self.labelWidth))" \
            data-samples-per-pixel="\(samplesPerPixel)" data-rate="\(rate)" font-family="sans-serif" font-size="11">

            <rect x="0" y="0" width="\(f(width))" height="\(f(height))" fill="#111827"/>

            """
        // The axis: a tick every 1, 2, 5, 10… seconds, about every 80 px.
        let secondsPerPixel = samplesPerPixel / rate
        let step = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].first { $0 / secondsPerPixel >= 70 } ?? 7200
        var tick = 0.0
        // Ticks only under the placed cues, clear of the "waiting for GO" label: the strip of
        // cues waiting for go has no times yet.
        let hasWaiting = bars.contains(where: \.waiting)
        let axisEnd = hasWaiting ? max(0, Double(stripFrom + gap / 2) - 70 * samplesPerPixel) : Double(total)
        while tick * rate <= axisEnd {
            let tx = x(Int64(tick * rate))
            out += "<line x1=\"\(f(tx))\" y1=\"\(f(Self.axisHeight - 4))\" x2=\"\(f(tx))\" y2=\"\(f(height))\" stroke=\"#374151\" stroke-width=\"1\"/>"
            out += "<text x=\"\(f(tx + 2))\" y=\"12\" fill=\"#9ca3af\">\(Self.escape(SessionTime.clock(tick)))</text>\n"
            tick += step
        }
        if waitingAt > stripFrom + gap || bars.contains(where: \.waiting) {
            let wx = x(stripFrom + gap / 2)
            out += "<line x1=\"\(f(wx))\" y1=\"0\" x2=\"\(f(wx))\" y2=\"\(f(height))\" stroke=\"#6b7280\" stroke-dasharray=\"4 3\"/>"
            out += "<text x=\"\(f(wx + 4))\" y=\"\(f(Self.axisHeight - 6))\" fill=\"#fbbf24\">waiting for GO →</text>\n"
        }
        for (index, layer) in timeline.layers.enumerated() {
            let top = Self.axisHeight + Double(index) * Self.laneHeight
            out += "<g class=\"lane\" data-layer=\"\(Self.escape(layer.name))\">"
            out += "<rect x=\"0\" y=\"\(f(top))\" width=\"\(f(width))\" height=\"\(f(Self.laneHeight))\" fill=\"\(index % 2 == 0 ? "#1f2937" : "#18212f")\"/>"
            out += "<text x=\"6\" y=\"\(f(top + Self.laneHeight / 2 + 4))\" fill=\"#e5e7eb\" font-weight=\"bold\">\(Self.escape(layer.name))</text></g>\n"
        }
        // (A group is drawn by its cues: its bar only places them.)
        for bar in bars where bar.cue.action != .group {
            let cue = bar.cue
            let top = Self.axisHeight + Double(cue.layer) * Self.laneHeight + 6
            let bottom = top + Self.laneHeight - 12
            let (x0, x1) = (x(bar.start), max(x(bar.end), x(bar.start) + 2))
            // The envelope: up over the fade-in (or crossfade-in), flat, down over the fade-out.
            let rise = min(x1 - x0, Double(max(cue.fadeIn, cue.crossfadeIn)) / samplesPerPixel)
            let fall = bar.open ? 0 : min(x1 - x0 - rise, Double(max(cue.fadeOut, cue.crossfadeOut)) / samplesPerPixel)
            let colour = Self.colours[cue.layer % Self.colours.count]
            let selected = cue.name == selected
            let points = [(x0, bottom), (x0 + rise, top), (x1 - fall, top), (x1, bottom)].map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            let state = playhead.map { cue.state(at: $0).rawValue } ?? (bar.waiting ? "waiting" : "scheduled")
            out += "<g class=\"cue\" data-cue=\"\(Self.escape(cue.name))\" data-start=\"\(bar.waiting ? "" : String(bar.start))\" data-state=\"\(state)\">"
            out += "<polygon points=\"\(points)\" fill=\"\(colour)\" fill-opacity=\"\(bar.waiting ? "0.25" : "0.7")\" "
                + "stroke=\"\(selected ? "#fde047" : colour)\" stroke-width=\"\(selected ? 3 : 1)\"\(bar.waiting ? " stroke-dasharray=\"5 3\"" : "")/>"
            // Each fade and crossfade as its own slope over its samples: fades white, crossfades
            // amber and dashed (an outgoing cue's and its follower's cross in an X).
            func slope(_ kind: String, rising: Bool, samples: Int64) {
                let run = min(x1 - x0, Double(samples) / samplesPerPixel)
                guard samples > 0, run > 1 else { return }
                let (from, to) = rising ? (x0, x0 + run) : (x1 - run, x1)
                let (y1, y2) = rising ? (bottom, top) : (top, bottom)
                let style = kind == "fade" ? "stroke=\"#f9fafb\" stroke-width=\"1.5\"" : "stroke=\"#fbbf24\" stroke-width=\"2\" stroke-dasharray=\"4 2\""
                out += "<line class=\"\(kind)\" data-samples=\"\(samples)\" x1=\"\(f(from))\" y1=\"\(f(y1))\" x2=\"\(f(to))\" y2=\"\(f(y2))\" \(style)/>"
            }
            slope("fade", rising: true, samples: cue.fadeIn)
            slope("crossfade", rising: true, samples: cue.crossfadeIn)
            if !bar.open {
                slope("fade", rising: false, samples: cue.fadeOut)
                slope("crossfade", rising: false, samples: cue.crossfadeOut)
            }
            if bar.open { out += "<text x=\"\(f(x1 - 12))\" y=\"\(f(bottom - 4))\" fill=\"#f9fafb\">∞</text>" }
            if cue.isManual {
                // A GO flag on the first sample of every cue a go places.
                out += "<path class=\"manual\" d=\"M\(f(x0)),\(f(top - 4)) l8,4 l-8,4 z\" fill=\"#fbbf24\"/>"
            }
            out += "<text x=\"\(f(x0 + 4))\" y=\"\(f(top + 13))\" fill=\"#f9fafb\">\(Self.escape(label(cue)))</text></g>\n"
        }
        let px = playhead.map(x) ?? -10
        out += "<line id=\"playhead\" x1=\"\(f(px))\" y1=\"0\" x2=\"\(f(px))\" y2=\"\(f(height))\" stroke=\"#f43f5e\" stroke-width=\"2\""
            + (playhead == nil ? " visibility=\"hidden\"" : "") + "/>\n</svg>\n"
        return out
    }

    /// About how wide `text` is drawn at the picture's font size (11 px sans-serif), with a
    /// little room after it.
    public static func labelPixels(_ text: String) -> Double { Double(text.count) * 6.5 + 12 }

    /// `text` with the five XML special characters escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
