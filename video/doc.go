// Package video turns video frames into the data matrix of robust PCA and
// back, for the paper's foreground–background separation experiment
// (Section 5): the frames, vectorized, are the columns of Y; the static
// background is the low-rank part M* and moving objects are the sparse
// corruptions S*.
//
// Frames come from a directory of images (PNG, JPEG, BMP, PGM/PPM) with
// [LoadDir] or from a video file decoded by an installed ffmpeg with
// [loadVideo]; [Load] picks one by the path. Both return a [Sequence]
// whose matrix Y has one column per frame:
//
//   - grayscale (default): d1 = width·height rows, the ITU-R BT.601 luma
//     Y' = 0.299 R + 0.587 G + 0.114 B of each pixel scaled to [0, 1],
//     pixels in row-major order within the frame (row y, column x at
//     index y·width + x);
//   - color: d1 = 3·width·height rows, the red plane, then the green
//     plane, then the blue plane, each in the same row-major order and
//     scaled to [0, 1].
//
// [Separate] is the whole workflow: it chooses the background's rank
// ([ChooseRank], checked again on the fit with its outliers clipped),
// solves robust PCA with any rpca.Method (or takes the per-pixel temporal
// median, [MedianBackground], the usual baseline), and decides the
// foreground masks ([Masks]: a threshold from each frame's own noise
// level, shadow suppression, a spatial filter and a minimum region size).
// [DefaultOptions] are the settings of `rpca video`; [Presets] holds the
// tool's defaults and the paper's. [Generate] makes clips with a known
// foreground for each kind of changing background.
//
// Results go back to images with [FrameImage] and [WriteFrames]; [Excess]
// and [Magnitude] turn a residual into a visible foreground, and [Montage]
// lays frames out in a labelled grid.
package video
