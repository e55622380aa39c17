package iterate

// The built-in default data of the jobs.

// PageRankPages are the pages of Flink's PageRankData: 1 to 15.
var PageRankPages = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// PageRankLinks are the links of Flink's PageRankData.EDGES.
var PageRankLinks = []Edge{
	{1, 2}, {1, 15}, {2, 3}, {2, 4}, {2, 5}, {2, 6}, {2, 7}, {3, 13}, {4, 2}, {5, 11},
	{5, 12}, {6, 1}, {6, 7}, {6, 8}, {7, 1}, {7, 8}, {8, 1}, {8, 9}, {8, 10}, {9, 14},
	{9, 1}, {10, 1}, {10, 13}, {11, 12}, {11, 1}, {12, 1}, {13, 14}, {14, 12}, {15, 1},
}

// ComponentVertices are Flink's ConnectedComponentsData.VERTICES: 1 to 16.
var ComponentVertices = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// ComponentEdges are Flink's ConnectedComponentsData.EDGES, which Flink's
// TransitiveClosureNaive reads by default too.
var ComponentEdges = []Edge{
	{1, 2}, {2, 3}, {2, 4}, {3, 5}, {6, 7}, {8, 9}, {8, 10}, {5, 11}, {11, 12}, {10, 13}, {9, 14},
	{13, 14}, {1, 15}, {16, 1},
}

// PathEdges is the default graph of ShortestPaths: the weighted graph of the
// usual illustration of Dijkstra's algorithm, plus an edge into the source
// and a self-loop; vertex 7 is unreachable from the default source 1.
var PathEdges = []WeightedEdge{
	{1, 2, 7}, {1, 3, 9}, {1, 6, 14}, {2, 3, 10}, {2, 4, 15}, {3, 4, 11},
	{3, 6, 2}, {4, 5, 6}, {6, 5, 9}, {7, 1, 1}, {5, 5, 0},
}

// KMeansCentroids are the default initial centroids of KMeans (four, as in
// Flink's KMeansData).
var KMeansCentroids = []Centroid{
	{1, []float64{-31.85, -44.77}},
	{2, []float64{35.16, 17.46}},
	{3, []float64{-5.16, 21.93}},
	{4, []float64{-24.06, 6.81}},
}

// KMeansPoints are the default points of KMeans: 2-D points in four clusters,
// after Flink's KMeansData.
var KMeansPoints = []Point{
	{[]float64{-14.22, -48.01}}, {[]float64{-22.78, 37.10}}, {[]float64{56.18, -42.99}}, {[]float64{35.04, 50.29}},
	{[]float64{-9.53, -46.26}}, {[]float64{-34.35, 48.25}}, {[]float64{55.82, -57.49}}, {[]float64{21.03, 54.64}},
	{[]float64{-13.63, -42.26}}, {[]float64{-36.57, 32.63}}, {[]float64{50.65, -52.40}}, {[]float64{24.48, 34.04}},
	{[]float64{-2.69, -36.02}}, {[]float64{-38.80, 36.58}}, {[]float64{24.00, -53.74}}, {[]float64{32.41, 24.96}},
	{[]float64{-4.32, -56.92}}, {[]float64{-22.68, 29.42}}, {[]float64{59.02, -39.56}}, {[]float64{24.47, 45.07}},
	{[]float64{5.23, -41.20}}, {[]float64{-23.00, 38.15}}, {[]float64{44.55, -51.50}}, {[]float64{14.62, 59.06}},
	{[]float64{7.41, -56.05}}, {[]float64{-26.63, 28.97}}, {[]float64{47.37, -44.72}}, {[]float64{29.07, 51.06}},
	{[]float64{0.59, -31.89}}, {[]float64{-39.09, 20.78}}, {[]float64{42.97, -48.98}}, {[]float64{34.36, 49.08}},
	{[]float64{-21.91, -49.01}}, {[]float64{-46.68, 46.04}}, {[]float64{48.52, -43.67}}, {[]float64{30.05, 49.25}},
	{[]float64{4.03, -43.56}}, {[]float64{-37.85, 41.72}}, {[]float64{38.24, -48.32}}, {[]float64{20.83, 57.85}},
}

// RegressionSamples are the default samples of LinearRegression: the first
// eighteen of Flink's LinearRegressionData (y ≈ 2x).
var RegressionSamples = []Sample{
	{[]float64{0.5}, 1.0}, {[]float64{1.0}, 2.0}, {[]float64{2.0}, 4.0}, {[]float64{3.0}, 6.0},
	{[]float64{4.0}, 8.0}, {[]float64{5.0}, 10.0}, {[]float64{6.0}, 12.0}, {[]float64{7.0}, 14.0},
	{[]float64{8.0}, 16.0}, {[]float64{9.0}, 18.0}, {[]float64{10.0}, 20.0}, {[]float64{-0.08}, -0.16},
	{[]float64{0.13}, 0.26}, {[]float64{-1.17}, -2.35}, {[]float64{1.72}, 3.45}, {[]float64{1.70}, 3.41},
	{[]float64{1.20}, 2.41}, {[]float64{-0.59}, -1.18},
}
