// Package video turns video frames into the data matrix of robust PCA and
// back, for the paper's foreground–background separation experiment
// (Section 5): the frames, vectorized, are the columns of Y; the static
// background is the low-rank part M* and moving objects are the sparse
// corruptions S*.
//
// The frames are read by package video/frames (a directory of images, a
// video file or URL through ffmpeg, YUV4MPEG2 on standard input) into a
// [frames.Sequence], whose matrix Y has one column per frame.
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
