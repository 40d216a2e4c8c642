/// A show with MIDI cues placed with audio (an impulse, `hit.wav`, of 0.5), timed and by a GO:
/// what the live and the render tests of MIDI cues play.
public enum MIDICueFixtures {
    /// The session: `tick` at 0.5 s with the note `light`; `hit2` (manual) with the MSC GO `desk`;
    /// `hit3` 0.25 s after it with the pitch bend `bend`.
    public static let show = """
        channels: 1
        cues:
          - { name: tick, file: hit.wav, at: 0.5 }
          - { name: light, type: midi, note: 60, velocity: 100, channel: 2, with: tick }
          - { name: hit2, number: 1, file: hit.wav, at: manual }
          - { name: desk, type: midi, msc: go, q_number: 12, device: 1, with: hit2 }
          - { name: bend, type: midi, pitch_bend: 100, with: hit2, offset: 0.25 }
          - { name: hit3, file: hit.wav, with: hit2, offset: 0.25 }

        """
}
