package video

// MaskSet holds the foreground masks of a run of frames, one byte per
// pixel (1: foreground, 0: background), frame after frame. Read as a
// [Matrix] it is the pixels × frames 0/1 matrix of the masks, at an
// eighth of the memory of a float64 matrix (15 MB instead of 123 for
// 200 frames of 320×240).
type MaskSet struct {
	Pixels, Frames int
	// Data holds frame k's pixels, row by row, at
	// Data[k·Pixels : (k+1)·Pixels].
	Data []uint8
}

// newMaskSet returns an empty (all background) MaskSet.
func newMaskSet(pixels, frames int) *MaskSet {
	return &MaskSet{Pixels: pixels, Frames: frames, Data: make([]uint8, pixels*frames)}
}

// Dims returns the number of pixels and of frames.
func (m *MaskSet) Dims() (int, int) { return m.Pixels, m.Frames }

// At returns 1 when pixel i is foreground in frame k, else 0.
func (m *MaskSet) At(i, k int) float64 {
	if i < 0 || i >= m.Pixels || k < 0 || k >= m.Frames {
		panic("video: MaskSet index out of range")
	}
	return float64(m.Data[k*m.Pixels+i])
}

// Frame returns frame k's mask (not a copy).
func (m *MaskSet) Frame(k int) []uint8 { return m.Data[k*m.Pixels : (k+1)*m.Pixels] }

// Foreground returns the number of foreground pixels over all frames.
func (m *MaskSet) Foreground() int {
	n := 0
	for _, v := range m.Data {
		n += int(v)
	}
	return n
}
