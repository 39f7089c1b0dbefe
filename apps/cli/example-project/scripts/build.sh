# The code of the step "Build" of the task build (tasks.yaml).
version="${VERSION:-dev}"
echo "building version $version"
mkdir -p out
echo "$version" > out/version.txt
echo "wrote out/version.txt"
